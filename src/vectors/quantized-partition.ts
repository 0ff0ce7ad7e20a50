/**
 * A partition's vectors held in memory as 8-bit integers, one array per dimension ("dimension-major"), to pick the
 * candidates of a nearest-neighbour query quickly; the candidates are then ranked by their exact vectors (see
 * partition-cache.ts). Why this layout: a query embedding of the hashing embedder is sparse (a question of a few
 * words sets 50-100 of 384 dimensions), so its dot product with every stored vector needs only those dimensions'
 * arrays: a quarter of the work of a full scan, and a quarter of the bytes of float32. sqlite-vec's scan reads and
 * multiplies every float (no SIMD in its published build): ~40-50 ms for 100,000 vectors, against ~8 ms here.
 */

/** Stored value = component × SCALE, clamped to ±127. Unit vectors' components are mostly far below 0.5. */
const SCALE = 256;
/** Query weights are integers too (component × QUERY_SCALE): 384 × 127 × 1024 stays far inside 32 bits. */
const QUERY_SCALE = 1024;

/** Memory a copy holds per vector: its bytes, its snippet id (8) and its running score (4). */
export function copyBytesPerVector(dimensions: number): number {
  return dimensions + 12;
}

export interface QuantizedPartition {
  readonly count: number;
  /** Memory held: the quantized vectors and their snippet ids. */
  readonly bytes: number;
  /** The snippet ids of about the `count` vectors with the largest dot product with `query`, in no order. */
  candidates(query: Float32Array, count: number): number[];
}

/** Collects a partition's vectors in arrival order, then lays them out by dimension (finish). */
export class QuantizedPartitionBuilder {
  private readonly rows: Int8Array[] = [];
  private readonly ids: number[] = [];
  private current: Int8Array;
  private filled = 0;

  constructor(
    private readonly dimensions: number,
    private readonly rowsPerBlock = 1024,
  ) {
    this.current = new Int8Array(dimensions * rowsPerBlock);
  }

  get count(): number {
    return this.ids.length;
  }

  /** Bytes the finished partition will hold (its vectors, snippet ids and running scores). */
  get bytes(): number {
    return this.ids.length * copyBytesPerVector(this.dimensions);
  }

  add(snippetId: number, vector: Float32Array): void {
    if (vector.length !== this.dimensions) throw new Error(`a vector of ${vector.length} dimensions in a partition of ${this.dimensions}`);
    if (this.filled === this.rowsPerBlock) {
      this.rows.push(this.current);
      this.current = new Int8Array(this.dimensions * this.rowsPerBlock);
      this.filled = 0;
    }
    const base = this.filled * this.dimensions;
    for (let d = 0; d < this.dimensions; d++) this.current[base + d] = quantize(vector[d]!);
    this.filled++;
    this.ids.push(snippetId);
  }

  /**
   * Lay the vectors out by dimension, one block of rows at a time with `pause()` awaited between blocks, so that a
   * thread answering queries meanwhile is never held up for the whole transposition.
   */
  async finish(pause: () => Promise<void> = async () => {}): Promise<QuantizedPartition> {
    const n = this.ids.length;
    const dims = this.dimensions;
    const columns = new Int8Array(n * dims);
    const blocks = [...this.rows, this.current];
    this.rows.length = 0;
    let row = 0;
    for (let b = 0; b < blocks.length; b++) {
      const block = blocks[b]!;
      const rowsHere = Math.min(this.rowsPerBlock, n - row);
      for (let r = 0; r < rowsHere; r++, row++) for (let d = 0; d < dims; d++) columns[d * n + row] = block[r * dims + d]!;
      blocks[b] = new Int8Array(0); // its memory can go now
      await pause();
    }
    return quantizedPartition(Float64Array.from(this.ids), columns, dims);
  }
}

function quantize(value: number): number {
  const q = Math.round(value * SCALE);
  return q > 127 ? 127 : q < -127 ? -127 : q;
}

function quantizedPartition(ids: Float64Array, columns: Int8Array, dimensions: number): QuantizedPartition {
  const n = ids.length;
  const scores = new Int32Array(n);
  return {
    count: n,
    bytes: columns.byteLength + ids.byteLength + scores.byteLength,
    candidates(query, count) {
      scores.fill(0);
      const used: Array<{ column: Int8Array; weight: number }> = [];
      for (let d = 0; d < dimensions; d++) {
        const weight = Math.round(query[d]! * QUERY_SCALE);
        if (weight !== 0) used.push({ column: columns.subarray(d * n, d * n + n), weight });
      }
      // Four dimensions per pass: a quarter of the loads and stores of the running scores.
      let u = 0;
      for (; u + 4 <= used.length; u += 4) {
        const [a, b, c, e] = [used[u]!, used[u + 1]!, used[u + 2]!, used[u + 3]!];
        const ca = a.column, cb = b.column, cc = c.column, ce = e.column;
        const wa = a.weight, wb = b.weight, wc = c.weight, we = e.weight;
        for (let i = 0; i < n; i++) scores[i] += wa * ca[i]! + wb * cb[i]! + wc * cc[i]! + we * ce[i]!;
      }
      for (; u < used.length; u++) {
        const { column, weight } = used[u]!;
        for (let i = 0; i < n; i++) scores[i] += weight * column[i]!;
      }
      return [...topIndexes(scores, Math.min(count, n))].map((i) => ids[i]!);
    },
  };
}

/** The indexes of the `count` largest values (ties broken arbitrarily): a min-heap, which most values never enter. */
function topIndexes(values: Int32Array, count: number): Int32Array {
  const heap = new Int32Array(count);
  let size = 0;
  const less = (x: number, y: number) => values[heap[x]!]! < values[heap[y]!]!;
  const swap = (x: number, y: number) => {
    const t = heap[x]!;
    heap[x] = heap[y]!;
    heap[y] = t;
  };
  const siftDown = (at: number) => {
    for (;;) {
      const l = 2 * at + 1, r = l + 1;
      let smallest = at;
      if (l < size && less(l, smallest)) smallest = l;
      if (r < size && less(r, smallest)) smallest = r;
      if (smallest === at) return;
      swap(at, smallest);
      at = smallest;
    }
  };
  for (let i = 0; i < values.length; i++) {
    if (size < count) {
      heap[size] = i;
      for (let at = size++; at > 0; ) {
        const parent = (at - 1) >> 1;
        if (!less(at, parent)) break;
        swap(at, parent);
        at = parent;
      }
    } else if (count > 0 && values[i]! > values[heap[0]!]!) {
      heap[0] = i;
      siftDown(0);
    }
  }
  return heap.subarray(0, size);
}

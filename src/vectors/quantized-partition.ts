/**
 * A partition's vectors held in memory as 8-bit integers, laid out by dimension (in blocks of rows), to pick the
 * candidates of a nearest-neighbour query quickly; the candidates are then ranked by their exact vectors (see
 * partition-cache.ts). Why this layout: a query embedding of the hashing embedder is sparse (a question of a few
 * words sets 50-100 of 384 dimensions), so its dot product with every stored vector needs only those dimensions'
 * values: a quarter of the work of a full scan, and a quarter of the bytes of float32. sqlite-vec's scan reads and
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

/**
 * Rows per block. The copy is a list of blocks, each laid out by dimension within itself, and a block is transposed
 * as soon as it is full: a copy being built holds its finished blocks and one block of rows, never the whole
 * partition twice (as rows, then as columns). Queries are as fast as over one array per dimension (measured).
 */
const BLOCK_ROWS = 4096;

/** Collects a partition's vectors in arrival order, one block at a time (finish hands over the copy). */
export class QuantizedPartitionBuilder {
  private readonly blocks: Int8Array[] = [];
  private readonly ids: number[] = [];
  /** The block being filled, row by row. */
  private readonly rows: Int8Array;
  private filled = 0;

  constructor(
    private readonly dimensions: number,
    private readonly blockRows = BLOCK_ROWS,
  ) {
    this.rows = new Int8Array(dimensions * blockRows);
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
    const base = this.filled * this.dimensions;
    for (let d = 0; d < this.dimensions; d++) this.rows[base + d] = quantize(vector[d]!);
    this.ids.push(snippetId);
    if (++this.filled === this.blockRows) this.closeBlock();
  }

  finish(): QuantizedPartition {
    this.closeBlock();
    return quantizedPartition(Float64Array.from(this.ids), this.blocks.splice(0), this.dimensions, this.blockRows);
  }

  /** Transpose the rows collected into a block of their own size, dimension by dimension. */
  private closeBlock(): void {
    const rows = this.filled;
    if (rows === 0) return;
    const dims = this.dimensions;
    const block = new Int8Array(rows * dims);
    for (let r = 0; r < rows; r++) for (let d = 0; d < dims; d++) block[d * rows + r] = this.rows[r * dims + d]!;
    this.blocks.push(block);
    this.filled = 0;
  }
}

function quantize(value: number): number {
  const q = Math.round(value * SCALE);
  return q > 127 ? 127 : q < -127 ? -127 : q;
}

/** `blocks` hold `blockRows` rows each, the last one the rest; row i of the partition is snippet ids[i]. */
function quantizedPartition(ids: Float64Array, blocks: Int8Array[], dimensions: number, blockRows: number): QuantizedPartition {
  const n = ids.length;
  const scores = new Int32Array(n);
  return {
    count: n,
    bytes: blocks.reduce((sum, block) => sum + block.byteLength, 0) + ids.byteLength + scores.byteLength,
    candidates(query, count) {
      const used: number[] = [];
      const weights: number[] = [];
      for (let d = 0; d < dimensions; d++) {
        const weight = Math.round(query[d]! * QUERY_SCALE);
        if (weight !== 0) used.push(d), weights.push(weight);
      }
      for (let b = 0; b < blocks.length; b++) {
        const block = blocks[b]!;
        const rows = block.length / dimensions;
        const base = b * blockRows;
        for (let i = 0; i < rows; i++) scores[base + i] = 0;
        // Four dimensions per pass: a quarter of the loads and stores of the running scores.
        let u = 0;
        for (; u + 4 <= used.length; u += 4) {
          const oa = used[u]! * rows, ob = used[u + 1]! * rows, oc = used[u + 2]! * rows, oe = used[u + 3]! * rows;
          const wa = weights[u]!, wb = weights[u + 1]!, wc = weights[u + 2]!, we = weights[u + 3]!;
          for (let i = 0; i < rows; i++) scores[base + i] += wa * block[oa + i]! + wb * block[ob + i]! + wc * block[oc + i]! + we * block[oe + i]!;
        }
        for (; u < used.length; u++) {
          const o = used[u]! * rows, w = weights[u]!;
          for (let i = 0; i < rows; i++) scores[base + i] += w * block[o + i]!;
        }
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

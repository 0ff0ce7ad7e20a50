import { Int8Columns } from "./int8-columns.js";

/**
 * A partition's vectors held in memory as 8-bit integers, laid out by dimension (in blocks of rows), to pick the
 * candidates of a nearest-neighbour query quickly; the candidates are then ranked by their exact vectors (see
 * partition-cache.ts). Why this layout: a query embedding of the hashing embedder is sparse (a question of a few
 * words sets 50-100 of 384 dimensions), so its dot product with every stored vector needs only those dimensions'
 * values: a quarter of the work of a full scan, and a quarter of the bytes of float32. sqlite-vec's scan reads and
 * multiplies every float (no SIMD in its published build): ~40-50 ms for 100,000 vectors, against ~8 ms here with
 * a JavaScript loop, and about a tenth of that since 0.7.5 with the WebAssembly SIMD kernel (int8-scan.wat), which
 * reads the columns where they are: the copy lives in the kernel's memory (int8-columns.ts).
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

/** A block of the copy: where its columns start, its rows, and its rows rounded up to 16 (each column's length). */
interface Block {
  offset: number;
  rows: number;
  stride: number;
}

/** Collects a partition's vectors in arrival order, one block at a time (finish hands over the copy). */
export class QuantizedPartitionBuilder {
  private readonly columns = new Int8Columns();
  private readonly blocks: Block[] = [];
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
    return quantizedPartition(Float64Array.from(this.ids), this.columns, this.blocks.splice(0), this.dimensions, this.blockRows);
  }

  /** Transpose the rows collected into the copy's memory, dimension by dimension, each column padded to 16 rows. */
  private closeBlock(): void {
    const rows = this.filled;
    if (rows === 0) return;
    const dims = this.dimensions;
    const stride = Math.ceil(rows / 16) * 16;
    const offset = this.columns.allocate(stride * dims);
    const block = this.columns.int8s(offset, stride * dims);
    for (let r = 0; r < rows; r++) for (let d = 0; d < dims; d++) block[d * stride + r] = this.rows[r * dims + d]!;
    this.blocks.push({ offset, rows, stride });
    this.filled = 0;
  }
}

function quantize(value: number): number {
  const q = Math.round(value * SCALE);
  return q > 127 ? 127 : q < -127 ? -127 : q;
}

/**
 * Row i of the partition is snippet ids[i]; block b holds rows from b × blockRows. The kernel adds a block's padded
 * rows too (zeros: nothing changes), so the scores have room for 16 more than the rows.
 */
function quantizedPartition(ids: Float64Array, columns: Int8Columns, blocks: Block[], dimensions: number, blockRows: number): QuantizedPartition {
  const n = ids.length;
  const scoresAt = columns.allocate((n + 16) * 4);
  return {
    count: n,
    bytes: columns.size + ids.byteLength,
    candidates(query, count) {
      const used: number[] = [];
      const weights: number[] = [];
      for (let d = 0; d < dimensions; d++) {
        const weight = Math.round(query[d]! * QUERY_SCALE);
        if (weight !== 0) {
          used.push(d);
          weights.push(weight);
        }
      }
      const scores = columns.int32s(scoresAt, n + 16);
      for (let b = 0; b < blocks.length; b++) {
        const { offset, rows, stride } = blocks[b]!;
        const base = b * blockRows;
        scores.fill(0, base, base + rows);
        if (used.length === 0) continue;
        columns.accumulate(
          scoresAt + base * 4,
          used.map((d) => offset + d * stride),
          weights,
          stride,
        );
      }
      return [...topIndexes(scores.subarray(0, n), Math.min(count, n))].map((i) => ids[i]!);
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
      const l = 2 * at + 1,
        r = l + 1;
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
      for (let at = size++; at > 0;) {
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

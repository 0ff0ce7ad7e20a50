import { QuantizedPartitionBuilder, type QuantizedPartition } from "./quantized-partition.js";

/** A partition's vectors as its reader gives them: snippet id and vector, and the generation they are of. */
export interface PartitionRows {
  generation: number;
  rows: Iterator<{ snippetId: number; vector: Float32Array }>;
  close(): void;
}

/** Retired partitions remembered (one per refresh of a library since the server started). */
const MAX_RETIRED = 10_000;

export interface PartitionCacheOptions {
  /** Memory the quantized copies may hold together; the least recently searched partition leaves first. */
  budgetBytes: number;
  /** Smaller partitions are scanned by sqlite-vec as they are (a few milliseconds): not worth a copy. */
  minVectors: number;
  /** Rows read between two pauses while a copy is built (other queries run in the pauses). */
  rowsPerSlice?: number;
}

/** What became of a copy the server should know about (it logs it): put in place, or too large for the budget. */
export interface CopyMade {
  partition: string;
  /** The copy's vectors; when over the budget, those read before it was given up (the partition holds more). */
  vectors: number;
  bytes: number;
  ms: number;
  overBudget?: boolean;
}

/**
 * The search worker's quantized copies of large partitions (quantized-partition.ts), each valid for one generation
 * of its partition (partition-generations.ts). A copy is built in the background after a query found none, in
 * slices between which other queries are answered; until it is ready, queries scan with sqlite-vec as before.
 */
export class PartitionCache {
  private readonly copies = new Map<string, { generation: number; partition: QuantizedPartition }>();
  /** Partitions being copied, or found not worth a copy (too small, too large), at a generation. */
  private readonly settled = new Map<string, number>();
  /** Partitions of replaced batches: never copied again (a search that raced the swap must not bring one back). */
  private readonly retired = new Set<string>();

  constructor(private readonly options: PartitionCacheOptions) {}

  /** The copy of this generation of the partition, if there is one (it becomes the most recently used). */
  get(partition: string, generation: number): QuantizedPartition | undefined {
    const entry = this.copies.get(partition);
    if (!entry) return undefined;
    if (entry.generation !== generation) {
      // The partition changed since: the copy can never be used again.
      this.copies.delete(partition);
      return undefined;
    }
    this.copies.delete(partition);
    this.copies.set(partition, entry);
    return entry.partition;
  }

  /** Whether a copy of this generation should be built: none exists, none is being built, none was refused. */
  wants(partition: string, generation: number): boolean {
    return this.options.budgetBytes > 0 && !this.retired.has(partition) && this.settled.get(partition) !== generation && this.copies.get(partition)?.generation !== generation;
  }

  /** Whether the copy of this generation is in place (without making it the most recently used). */
  holds(partition: string, generation: number): boolean {
    return this.copies.get(partition)?.generation === generation;
  }

  /** Drop a replaced batch's copy now (its successor is live), and copy it no more. */
  retire(partition: string): void {
    this.copies.delete(partition);
    this.settled.delete(partition);
    this.retired.add(partition);
    // One name per refresh; batch numbers are not reused while a copy could exist, so the oldest can go.
    if (this.retired.size > MAX_RETIRED) this.retired.delete(this.retired.values().next().value!);
  }

  /** A partition asked to be copied for a new batch is not a retired one (a batch number handed out again). */
  revive(partition: string): void {
    this.retired.delete(partition);
  }

  /**
   * Note that this generation of the partition needs nothing more: a copy of it is on its way (see build), or it is
   * too small to copy (the query already saw all of it).
   */
  settle(partition: string, generation: number): void {
    this.settled.set(partition, generation);
  }

  /** Memory the copies hold together. */
  get bytes(): number {
    return [...this.copies.values()].reduce((sum, entry) => sum + entry.partition.bytes, 0);
  }

  /**
   * Build the copy from `open()`'s rows; resolves when it is in place or was given up (errors are the caller's). The
   * caller settles the partition first, when it decides to build, so that queries meanwhile do not ask again.
   */
  async build(partition: string, open: () => PartitionRows, pause: () => Promise<void>): Promise<CopyMade | undefined> {
    // Retired while it waited its turn (a search of the replaced batch just before the swap asked for it).
    if (this.retired.has(partition)) return undefined;
    const started = performance.now();
    const source = open();
    // The rows may be of a newer generation than the query saw: the copy is filed under theirs.
    const generation = source.generation;
    this.settled.set(partition, generation);
    let builder: QuantizedPartitionBuilder | undefined;
    try {
      const slice = this.options.rowsPerSlice ?? 2048;
      for (let n = 1; ; n++) {
        const next = source.rows.next();
        if (next.done) break;
        builder ??= new QuantizedPartitionBuilder(next.value.vector.length);
        builder.add(next.value.snippetId, next.value.vector);
        if (builder.bytes > this.options.budgetBytes) {
          return { partition, vectors: builder.count, bytes: builder.bytes, ms: Math.round(performance.now() - started), overBudget: true };
        }
        if (n % slice === 0) await pause();
      }
    } finally {
      source.close();
    }
    // Retired while it was built: kept, it would only push a live batch's copy out of the budget.
    if (!builder || builder.count < this.options.minVectors || this.retired.has(partition)) return undefined;
    const copy = builder.finish();
    this.copies.delete(partition);
    this.copies.set(partition, { generation, partition: copy });
    // Least recently searched first (a Map keeps insertion order; get() moves a copy to the end). One that leaves is
    // copied again after its partition's next search.
    for (const name of this.copies.keys()) {
      if (this.bytes <= this.options.budgetBytes || name === partition) break;
      this.copies.delete(name);
      this.settled.delete(name);
    }
    return { partition, vectors: copy.count, bytes: copy.bytes, ms: Math.round(performance.now() - started) };
  }

  /** Drop the copies of partitions written since (a replaced batch's, once deleted): their memory is free at once. */
  sweep(generationOf: (partition: string) => number | undefined): void {
    for (const [name, entry] of this.copies) if (generationOf(name) !== entry.generation) this.copies.delete(name);
    // What was decided about such partitions no longer holds either (one entry per batch ever searched otherwise).
    for (const [name, generation] of this.settled) if (generationOf(name) !== generation) this.settled.delete(name);
  }
}

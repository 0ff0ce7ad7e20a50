import type { IndexBatch } from "../search-index.js";
import { MIN_CACHED_VECTORS, type VectorSearch } from "./knn-worker.js";
import { partitionOf } from "./vector-index.js";

/**
 * @default 2 minutes: a 100,000-snippet batch's word index and vector copy take seconds; past this bound the batch
 * is published anyway, and its first searches fall back to FTS5 and the stored vectors while the build finishes.
 */
export const WARM_BOUND_MS = 120_000;

/**
 * In the server, before a large batch is published: have the search threads build its word index and its vectors'
 * in-memory copy now, and wait (at most `boundMs`) until both are in place or given up. The first searches after
 * the swap then find them, instead of falling back to FTS5 and a full scan while they are built on demand (at
 * 100,000 snippets that was 100-290 ms per request for the first ~20). Until the publication both batches' parts
 * are held: about 400 bytes per snippet for the copy and the word index's size again, for the seconds the build
 * takes; the replaced batch's go at once after the swap (retireBatchParts). A command has no search threads:
 * nothing to do. Small batches are searched as stored and get no parts.
 */
export async function prepareBatchParts(
  threads: VectorSearch | undefined,
  vectorsStale: boolean,
  target: IndexBatch,
  snippets: number,
  signal?: AbortSignal,
  boundMs = WARM_BOUND_MS,
): Promise<void> {
  if (!threads || snippets < MIN_CACHED_VECTORS) return;
  const parts = [threads.warmWords(target)];
  // Vectors being rebuilt for a new embedding provider are not searched: no copy of them.
  if (!vectorsStale) parts.push(threads.warm(partitionOf(target.libraryId, target.version, target.batch)));
  let timer: NodeJS.Timeout | undefined;
  let stop: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
    timer = setTimeout(resolve, boundMs);
    signal?.addEventListener("abort", stop, { once: true });
  });
  try {
    await Promise.race([Promise.all(parts), stopped]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop!);
  }
}

/** After the swap: the search threads drop the replaced batch's copy and word index now, not at a later sweep. */
export function retireBatchParts(threads: VectorSearch | undefined, replaced: IndexBatch): void {
  threads?.retire(partitionOf(replaced.libraryId, replaced.version, replaced.batch));
}

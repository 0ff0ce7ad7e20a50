import type { IndexBatch, IndexProbe } from "../search-index.js";
import { MIN_CACHED_VECTORS, type VectorSearch } from "./knn-worker.js";
import { partitionOf } from "./vector-index.js";

/**
 * @default 2 minutes: a 100,000-snippet batch's word index and vector copy take seconds; past this bound the batch
 * is published anyway, and its first searches fall back to FTS5 and the stored vectors while the build finishes.
 */
export const WARM_BOUND_MS = 120_000;

/** @default 10 s: a probe buys speed only, and waits behind the word thread's queue of index builds. */
export const PROBE_BOUND_MS = 10_000;

/** Wait for `work` at most `boundMs`, or until `signal` aborts; whichever comes first ends the wait (never rejects). */
async function boundedWait<T>(work: Promise<T>, fallback: T, boundMs: number, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) return fallback;
  let timer: NodeJS.Timeout | undefined;
  let stop: (() => void) | undefined;
  const stopped = new Promise<T>((resolve) => {
    stop = () => resolve(fallback);
    timer = setTimeout(stop, boundMs);
    signal?.addEventListener("abort", stop, { once: true });
  });
  try {
    return await Promise.race([work, stopped]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop!);
  }
}

/**
 * In the server, before a large batch is published: have the search threads build its word index and its vectors'
 * in-memory copy now, and wait (at most `boundMs`) until both are in place or given up. The first searches after
 * the swap then find them, instead of falling back to FTS5 and a full scan while they are built on demand (at
 * 100,000 snippets that was 100-290 ms per request for the first ~20). Until the publication both batches' parts
 * are held: about 400 bytes per snippet for the copy and the word index's size again, for the seconds the build
 * takes; the replaced batch's go at once after the swap (retireBatchParts). A command has no search threads:
 * nothing to do. Small batches are searched as stored and get no parts.
 */
export async function prepareBatchParts(threads: VectorSearch | undefined, vectorsStale: boolean, target: IndexBatch, snippets: number, signal?: AbortSignal, boundMs = WARM_BOUND_MS): Promise<void> {
  if (!threads || snippets < MIN_CACHED_VECTORS) return;
  const parts = [threads.warmWords(target)];
  // Vectors being rebuilt for a new embedding provider are not searched: no copy of them.
  if (!vectorsStale) parts.push(threads.warm(partitionOf(target.libraryId, target.version, target.batch)));
  await boundedWait(
    Promise.all(parts).then(() => undefined),
    undefined,
    boundMs,
    signal,
  );
}

/**
 * In the server, once a large batch is live and the replaced one purged: what the first searches of it would pay,
 * paid now, before the ingestion reports the library finalized (each measured at 100,000 snippets):
 * - the files made whole first (`checkpoint`): a checkpoint that grows a file after this makes every search
 *   connection map it again, and each page a search touches then faults in anew (40-60 ms for the first searches);
 * - a search of it as a reader's would be (the vector thread's nearest 100 and their exact vectors, the word thread's
 *   BM25, the main thread's rows), made PROBE_ROUNDS times: on a server's first large library, the threads' ranking
 *   code (the word index's loop, the int8 scan) ran only once before and was not optimized yet (20-25 ms more);
 * - every page of its stored vectors touched on the vector thread's connection (the exact vectors of a search's
 *   candidates are read from there: a first search touched thousands of pages for the first time);
 * - the IDF counts FTS5 forgets when its structure changes (the publication and the purge change it): the new
 *   index's frequent terms and the words searched lately, counted again on the word thread.
 * Errors are ignored: this is speed, never an answer.
 */
export async function probeBatch(
  search: VectorSearch | undefined,
  vectorsStale: boolean,
  target: IndexBatch,
  snippets: number,
  probe: IndexProbe,
  signal?: AbortSignal,
  checkpoint?: () => Promise<void>,
  boundMs = PROBE_BOUND_MS,
): Promise<number[]> {
  if (!search || snippets < MIN_CACHED_VECTORS) return [];
  const partition = partitionOf(target.libraryId, target.version, target.batch);
  // Bounded and stopped by the job's signal: the recount waits behind the word thread's queued builds (a server's
  // start warms every large library), and a server stopping must not wait for a probe.
  const once = () =>
    Promise.all([
      vectorsStale ? Promise.resolve([]) : search.nearest(probe.vector, PROBE_DEPTH, partition).catch(() => []),
      probe.words.length ? search.rankWords({ ...target, words: probe.words, depth: PROBE_DEPTH }).catch(() => undefined) : undefined,
    ]).then(([nearest]) => nearest);
  // The first round's ids are the answer even when the bound or the signal ends the rest.
  let found: number[] = [];
  const searched = (async () => {
    await checkpoint?.().catch(() => {});
    const first = once().then((nearest) => (found = nearest.map((match) => match.snippetId)));
    await Promise.all([first, vectorsStale ? undefined : search.touch(partition), search.recountWords()]);
    for (let round = 1; round < PROBE_ROUNDS; round++) await once();
  })();
  await boundedWait(searched, undefined, boundMs, signal);
  return found;
}

/** As deep as a search ranks (search/rank-snippets.ts). */
const PROBE_DEPTH = 100;
const PROBE_ROUNDS = 3;

/** After the swap: the search threads drop the replaced batch's copy and word index now, not at a later sweep. */
export function retireBatchParts(threads: VectorSearch | undefined, replaced: IndexBatch): void {
  threads?.retire(partitionOf(replaced.libraryId, replaced.version, replaced.batch));
}

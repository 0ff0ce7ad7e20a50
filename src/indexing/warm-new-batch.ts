import type { OpenVolume } from "../volume/open-volume.js";
import { MIN_CACHED_VECTORS } from "../vectors/knn-worker.js";
import { partitionOf } from "../vectors/vector-index.js";

/**
 * @default 2 minutes: a 100,000-snippet batch's word index and vector copy take seconds; past this bound the batch
 * is published anyway, and its first searches fall back to FTS5 and the stored vectors while the build finishes.
 */
export const WARM_BOUND_MS = 120_000;

/** A library version's batch, named as the search threads keep its parts. */
export interface BatchOfLibrary {
  libraryId: string;
  version: string;
  batch: number;
}

/**
 * In the server, before a large batch is published: have the search threads build its word index and its vectors'
 * in-memory copy now, and wait (at most `boundMs`) until both are in place or given up. The first searches after
 * the swap then find them, instead of falling back to FTS5 and a full scan while they are built on demand (at
 * 100,000 snippets that was 100-290 ms per request for the first ~20). Until the publication both batches' parts
 * are held: about 400 bytes per snippet for the copy and the word index's size again, for the seconds the build
 * takes; the replaced batch's go at once after the swap (dropReplacedParts). A command has no search threads: nothing
 * to do. Small batches are searched as stored and get no parts.
 */
export async function warmNewBatch(volume: OpenVolume, target: BatchOfLibrary, snippets: number, signal?: AbortSignal, boundMs = WARM_BOUND_MS): Promise<void> {
  const search = volume.vectorSearch;
  if (!search || snippets < MIN_CACHED_VECTORS) return;
  const parts = [search.warmWords(target)];
  // Vectors being rebuilt for a new embedding provider are not searched: no copy of them.
  if (!volume.vectors.stale) parts.push(search.warm(partitionOf(target.libraryId, target.version, target.batch)));
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

/** A search of the new batch made by its ingestion: the first snippet's title words and embedding. */
export interface ProbeSearch {
  words: string[];
  vector: Float32Array;
}

/** The probe for a batch whose first snippet is `title` with `vector`: up to three of its words, as FTS5 cuts them. */
export function probeOf(title: string, vector: Float32Array): ProbeSearch {
  // A copy: the chunk's vectors may be handed over to the writer thread (their memory moves with them).
  return { words: (title.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 3), vector: new Float32Array(vector) };
}

/**
 * In the server, once a large batch is live and the replaced one purged: one search of it, as a reader's would be
 * (the vector thread's nearest 100 and their exact vectors, the word thread's BM25, the main thread's rows), before
 * the ingestion reports the library finalized. Its parts are in place already; what it pays is the rest of a first
 * search after such a change (measured at 21,000 snippets: 60-140 ms, which the first request paid): the IDF counts
 * FTS5 forgets when its structure changes (the publication and the purge change it; the word thread counts again
 * those of the words searched lately), and each connection's first reads of the new vectors and rows. Errors are ignored: this is speed, never an answer.
 */
export async function probeNewBatch(volume: OpenVolume, target: BatchOfLibrary, snippets: number, probe: ProbeSearch | undefined): Promise<void> {
  const search = volume.vectorSearch;
  if (!search || !probe || snippets < MIN_CACHED_VECTORS) return;
  const partition = partitionOf(target.libraryId, target.version, target.batch);
  const [nearest] = await Promise.all([
    volume.vectors.stale ? Promise.resolve([]) : search.nearest(probe.vector, PROBE_DEPTH, partition).catch(() => []),
    probe.words.length ? search.rankWords({ ...target, words: probe.words, depth: PROBE_DEPTH }).catch(() => undefined) : undefined,
    // The IDFs of the words searched lately, which FTS5's changed structure made the word thread forget.
    search.recountWords(),
  ]);
  await volume.store.snippets.load(target.libraryId, target.version, nearest.map((match) => match.snippetId)).catch(() => []);
}

/** As deep as a search ranks (search/rank-snippets.ts). */
const PROBE_DEPTH = 100;

/** After the swap: the search threads drop the replaced batch's copy and word index now, not at a later sweep. */
export function dropReplacedParts(volume: OpenVolume, replaced: BatchOfLibrary): void {
  volume.vectorSearch?.retire(partitionOf(replaced.libraryId, replaced.version, replaced.batch));
}

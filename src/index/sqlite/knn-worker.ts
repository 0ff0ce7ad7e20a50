import { Worker } from "node:worker_threads";
import { LdsError } from "../../errors.js";
import { setting } from "../../hints.js";
import { builtModule } from "../../util/built-module.js";
import { armedFailpoint } from "../../util/failpoint.js";
import type { WordIndexMade, WordIndexTarget, WordRankRequest, WordSearchOptions } from "./word-search.js";
import type { WordRanking } from "./word-index.js";
import type { CopyMade, PartitionCacheOptions } from "./partition-cache.js";
import type { VectorMatch } from "./vector-index.js";

const ENTRY = builtModule(import.meta.url, "./knn-worker-entry.js");

export interface VectorSearch {
  nearest(vector: Float32Array, k: number, partition: string): Promise<VectorMatch[]>;
  /**
   * FTS5's BM25 ranking from the thread's word index of the batch (store/word-search.ts); undefined when it has
   * none yet (it builds one for a large batch) or the thread was not given lds.db: the caller asks FTS5 then.
   */
  rankWords(request: WordRankRequest): Promise<WordRanking[] | undefined>;
  /**
   * Have the thread copy a large partition into memory before its first search (see partition-search.ts). Resolves
   * when the copy is in place or was given up (onCopy says which), or the thread is gone; never rejects.
   */
  warm(partition: string): Promise<void>;
  /** Have the thread build a large batch's word index before its first search (store/word-search.ts); as warm. */
  warmWords(target: WordIndexTarget): Promise<void>;
  /** Have the word thread count again the IDFs of recent query words (store/word-search.ts); as warm. */
  recountWords(): Promise<void>;
  /** Read every stored vector of the partition once on the vector thread's connection (probeBatch says why). */
  touch(partition: string): Promise<void>;
  /** A batch was replaced (its successor is live): drop the copy of its partition and its word index now. */
  retire(partition: string): void;
  close(): Promise<void>;
}

/** @default 10 s: far beyond any healthy search (tens of milliseconds), short enough for a client to see an answer. */
export const SEARCH_TIMEOUT_MS = 10_000;

/** Partitions of fewer vectors are scanned as stored: sqlite-vec takes under 10 ms for them. */
export const MIN_CACHED_VECTORS = 20_000;

/** The search thread's BM25 side: lds.db, and how its word indexes are kept (none without it). */
export interface WordSearchSetup {
  storeFile: string;
  options: WordSearchOptions;
  onIndex?: (made: WordIndexMade) => void;
}

/**
 * Nearest-neighbour queries, and, given lds.db (`words`), BM25 rankings from word indexes, in a worker thread. The
 * vector search is one of a search's two long steps (a scan of 100,000 vectors by sqlite-vec: ~50 ms; from the
 * worker's quantized copy, partition-search.ts: a few ms); in a thread of its own it runs while the main thread
 * ranks with FTS5 when the batch has no word index, and other requests are not held up behind it. The server starts
 * two (vectors/search-threads.ts): one for the vectors, one for the word indexes, so that the scan and BM25 run side
 * by side. A dead worker is replaced at the next query, and one that does not answer within `timeoutMs` is
 * terminated (and replaced) with a 504 timeout for the request. `cache` bounds the
 * worker's in-memory copies of large partitions (partition-search.ts); none by default, the server passes
 * LDS_VECTOR_CACHE_MB.
 */
export function createVectorSearchWorker(
  file: string,
  timeoutMs = SEARCH_TIMEOUT_MS,
  cache: PartitionCacheOptions = { budgetBytes: 0, minVectors: MIN_CACHED_VECTORS },
  onCopy: (made: CopyMade) => void = () => {},
  words?: WordSearchSetup,
): VectorSearch {
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (e: Error) => void }>();
  /** Fail every pending query of the current worker and forget it; events of a worker already replaced are ignored. */
  const failAll = (from: Worker | undefined, err: Error) => {
    if (from !== worker) return;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    worker = undefined;
  };
  const start = () => {
    const w = new Worker(ENTRY, { workerData: { file, cache, storeFile: words?.storeFile, words: words?.options, failpoint: armedFailpoint() } });
    w.on("message", ({ id, result, error, copied, indexed }: { id: number; result?: unknown; error?: string; copied?: CopyMade; indexed?: WordIndexMade }) => {
      if (copied) return onCopy(copied);
      if (indexed) return words?.onIndex?.(indexed);
      const p = pending.get(id);
      pending.delete(id);
      if (error !== undefined) p?.reject(new Error(`search failed: ${error}`));
      else p?.resolve(result);
    });
    w.on("error", (err) => failAll(w, err));
    w.on("exit", (code) => failAll(w, new Error(`the ${words ? "word-index" : "vector"} search thread exited with code ${code}`)));
    return w;
  };
  /** Post a message to the thread, started first if there is none. */
  const post = (message: Record<string, unknown>, transfer: ArrayBuffer[] = []) => {
    worker ??= start();
    worker.postMessage(message, transfer);
  };
  /** Post a query to the thread and wait for its answer, within the time limit. */
  const ask = <T>(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<T> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const stuck = worker;
        failAll(
          stuck,
          new LdsError("timeout", `The search took longer than ${timeoutMs} ms and was stopped.`, {
            hint: `Try again; if it keeps happening, the server log and ${setting("searchTimeout")} are where to look.`,
          }),
        );
        void stuck?.terminate();
      }, timeoutMs);
      const settle =
        <V>(done: (value: V) => void) =>
        (value: V) => {
          clearTimeout(timer);
          done(value);
        };
      pending.set(id, { resolve: settle((value) => resolve(value as T)), reject: settle(reject) });
      post({ id, ...message }, transfer);
    });
  };
  /**
   * Post a request whose answer may take as long as building a copy or an index (seconds; the ingestion bounds its
   * wait): no time limit, which would stop the thread. A thread that dies meanwhile ends the wait as well.
   */
  const awaitReady = (message: Record<string, unknown>): Promise<void> => {
    const id = nextId++;
    return new Promise<void>((resolve) => {
      pending.set(id, { resolve: () => resolve(), reject: () => resolve() });
      post({ id, ...message });
    });
  };
  return {
    nearest(vector, k, partition) {
      const copy = new Float32Array(vector);
      return ask<VectorMatch[]>({ vector: copy, k, partition }, [copy.buffer as ArrayBuffer]);
    },
    async rankWords(request) {
      if (!words) return undefined;
      return (await ask<WordRanking[] | null>({ rank: request })) ?? undefined;
    },
    warm(partition) {
      return awaitReady({ warm: true, partition });
    },
    warmWords(target) {
      return words ? awaitReady({ warmWords: target }) : Promise.resolve();
    },
    recountWords() {
      return words ? awaitReady({ recount: true }) : Promise.resolve();
    },
    touch(partition) {
      return awaitReady({ touch: partition });
    },
    retire(partition) {
      // A thread not started holds nothing to drop.
      worker?.postMessage({ retire: partition });
    },
    async close() {
      const w = worker;
      // Waits with no timer of their own (warm, warmWords, recountWords) end now, not never.
      failAll(w, new Error("The search thread was stopped."));
      worker = undefined;
      await w?.terminate();
    },
  };
}

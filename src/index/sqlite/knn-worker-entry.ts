import { parentPort, workerData } from "node:worker_threads";
import { createWordSearch, type WordIndexTarget, type WordRankRequest, type WordSearchOptions } from "./word-search.js";
import { armFailpoint, exitpoint, stallpoint } from "../../util/failpoint.js";
import type { PartitionCacheOptions } from "./partition-cache.js";
import { createPartitionSearch } from "./partition-search.js";

// The thread side of the search worker: its own read-only connections to vectors.db (nearest neighbours) and, when
// given, lds.db (BM25 from word indexes); one query at a time.
const { file, cache, storeFile, words, failpoint } = workerData as { file: string; cache: PartitionCacheOptions; storeFile?: string; words?: WordSearchOptions; failpoint?: string };
// The test hook armed in the thread that started this one (util/failpoint.ts): nothing below the shells reads the environment.
armFailpoint(failpoint);
// Opened at the first vector query: the server's word-index thread never asks one, and needs no vectors.db.
let partitions: ReturnType<typeof createPartitionSearch> | undefined;
const search = () => (partitions ??= createPartitionSearch(file, cache, (copied) => parentPort!.postMessage({ copied })));
const wordSearch = storeFile && words ? createWordSearch(storeFile, words, (indexed) => parentPort!.postMessage({ indexed })) : undefined;

interface Request {
  id: number;
  vector?: Float32Array;
  k?: number;
  partition?: string;
  warm?: boolean;
  rank?: WordRankRequest;
  warmWords?: WordIndexTarget;
  retire?: string;
  recount?: boolean;
  touch?: string;
}

/** Answer once a copy or index asked for ahead of its searches is in place or given up (the ingestion waits for it). */
const whenWarm = (id: number, warming: Promise<void> | undefined) =>
  void (warming ?? Promise.resolve())
    // Speed only: a preparation that fails must not stop the thread (an unhandled rejection would).
    .catch(() => {})
    .then(() => parentPort!.postMessage({ id, result: null }));

parentPort!.on("message", ({ id, vector, k, partition, warm, rank, warmWords, retire, recount, touch }: Request) => {
  if (warm) return whenWarm(id, search().warm(partition!));
  if (warmWords) return whenWarm(id, wordSearch?.warm(warmWords));
  if (recount) return whenWarm(id, wordSearch?.recount());
  // Opening vectors.db may throw: inside the promise, so that it ends this request, not the thread.
  if (touch !== undefined)
    return whenWarm(
      id,
      Promise.resolve().then(() => search().touch(touch)),
    );
  if (retire !== undefined) {
    // A replaced batch's parts: its copy (a vector thread that has opened vectors.db) and its word index.
    partitions?.retire(retire);
    return wordSearch?.dropRetired();
  }
  // Test hooks: a thread that hangs, or one that dies, must cost one request an error, never the server.
  stallpoint("vector-search-stall");
  exitpoint("vector-search-crash", 70);
  try {
    const result = rank ? (wordSearch?.rank(rank) ?? null) : search().nearest(vector!, k!, partition!);
    parentPort!.postMessage({ id, result });
  } catch (err) {
    parentPort!.postMessage({ id, error: (err as Error).message });
  }
});

import type { Logger } from "pino";
import type { DataVolume } from "../config/data-volume.js";
import type { ServerSettings } from "../config/server-settings.js";
import { chooseEngine } from "../engine/choose-engine.js";
import type { WordIndexMade } from "../store/word-search.js";
import { createVectorSearchWorker, MIN_CACHED_VECTORS, type VectorSearch } from "../vectors/knn-worker.js";
import type { CopyMade } from "../vectors/partition-cache.js";
import { twoSearchThreads } from "../vectors/search-threads.js";
import { partitionLibrary } from "../vectors/vector-index.js";

/** Vectors and word indexes on threads of their own, so that a fused search's two rankings run side by side. */
export function startSearchThreads(volume: DataVolume, settings: ServerSettings, logger: Logger): VectorSearch {
  const files = chooseEngine(volume).files(volume);
  return twoSearchThreads(
    createVectorSearchWorker(files.vectors, settings.searchTimeoutMs, { budgetBytes: settings.vectorCacheBytes, minVectors: MIN_CACHED_VECTORS }, (copy) =>
      logVectorCopy(logger, copy, settings.vectorCacheBytes),
    ),
    createVectorSearchWorker(files.vectors, settings.searchTimeoutMs, { budgetBytes: 0, minVectors: MIN_CACHED_VECTORS }, () => {}, {
      storeFile: files.records,
      options: { budgetBytes: settings.wordIndexBytes, minRows: MIN_CACHED_VECTORS },
      onIndex: (made) => logWordIndex(logger, made, settings.wordIndexBytes),
    }),
  );
}

const mib = (bytes: number) => Math.ceil(bytes / 2 ** 20);

/** The search thread's word index of a large library's batch (store/word-search.ts): ready, failed, or too large. */
function logWordIndex(logger: Logger, made: WordIndexMade, budgetBytes: number): void {
  const library = made.libraryId + (made.version ? `@${made.version}` : "");
  if (made.failed) {
    logger.warn({ library, err: made.failed }, "search: building a word index failed; BM25 rankings of this library are computed by SQLite (slower, same answers). A restart or the next refresh of the library tries again.");
    return;
  }
  if (!made.overBudget) {
    logger.info({ library, snippets: made.rows, mib: mib(made.bytes), seconds: made.ms / 1000 }, "search: a word index of a large library is ready; its BM25 rankings use it from now on");
    return;
  }
  logger.warn(
    { library, snippetsRead: made.rows, budgetMib: mib(budgetBytes) },
    `search: the word index of ${library} needs more than the ${mib(budgetBytes)} MiB of LDS_WORD_INDEX_MB, so its BM25 rankings are computed by SQLite (several times slower). Raise LDS_WORD_INDEX_MB (an index takes about ${Math.round(made.bytes / Math.max(1, made.rows))} bytes per snippet) and restart the server to speed them up.`,
  );
}

/** The search thread's copies of large libraries' vectors (vectors/partition-search.ts): ready, or too large. */
function logVectorCopy(logger: Logger, copy: CopyMade, budgetBytes: number): void {
  const library = partitionLibrary(copy.partition);
  if (!copy.overBudget) {
    logger.info({ library, vectors: copy.vectors, mib: mib(copy.bytes), seconds: copy.ms / 1000 }, "vector search: an in-memory copy of a large library's vectors is ready; its searches use it from now on");
    return;
  }
  logger.warn(
    { library, vectorsRead: copy.vectors, budgetMib: mib(budgetBytes) },
    `vector search: the vectors of ${library} need more than the ${mib(budgetBytes)} MiB of LDS_VECTOR_CACHE_MB for an in-memory copy, so its searches scan the stored vectors (several times slower). Raise LDS_VECTOR_CACHE_MB (a copy takes ${Math.round(copy.bytes / Math.max(1, copy.vectors))} bytes per snippet) and restart the server to speed them up.`,
  );
}

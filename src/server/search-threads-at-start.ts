import type { Logger } from "pino";
import type { ServerSettings } from "../config/server-settings.js";
import type { IndexPartMade } from "../index/search-index.js";
import type { OpenVolume } from "../volume/open-volume.js";

/** Searches on threads of their own (the index's), so that a fused search's two rankings run side by side. */
export function startSearchThreads(volume: OpenVolume, settings: ServerSettings, logger: Logger): { stop(): Promise<void> } {
  return volume.index.startSearchThreads({ timeoutMs: settings.searchTimeoutMs, vectorCacheBytes: settings.vectorCacheBytes, wordIndexBytes: settings.wordIndexBytes }, (made) =>
    made.kind === "words" ? logWordIndex(logger, made, settings.wordIndexBytes) : logVectorCopy(logger, made, settings.vectorCacheBytes),
  );
}

const mib = (bytes: number) => Math.ceil(bytes / 2 ** 20);

/** The search thread's word index of a large library's batch (index/sqlite/word-search.ts): ready, failed, or too large. */
function logWordIndex(logger: Logger, made: IndexPartMade, budgetBytes: number): void {
  const library = made.library;
  if (made.failed) {
    logger.warn(
      { library, err: made.failed },
      "search: building a word index failed; BM25 rankings of this library are computed by SQLite (slower, same answers). A restart or the next refresh of the library tries again.",
    );
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

/** The search thread's copies of large libraries' vectors (index/sqlite/partition-search.ts): ready, or too large. */
function logVectorCopy(logger: Logger, copy: IndexPartMade, budgetBytes: number): void {
  const library = copy.library;
  if (!copy.overBudget) {
    logger.info({ library, vectors: copy.rows, mib: mib(copy.bytes), seconds: copy.ms / 1000 }, "vector search: an in-memory copy of a large library's vectors is ready; its searches use it from now on");
    return;
  }
  logger.warn(
    { library, vectorsRead: copy.rows, budgetMib: mib(budgetBytes) },
    `vector search: the vectors of ${library} need more than the ${mib(budgetBytes)} MiB of LDS_VECTOR_CACHE_MB for an in-memory copy, so its searches scan the stored vectors (several times slower). Raise LDS_VECTOR_CACHE_MB (a copy takes ${Math.round(copy.bytes / Math.max(1, copy.rows))} bytes per snippet) and restart the server to speed them up.`,
  );
}

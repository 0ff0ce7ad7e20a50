import type { IndexPartMade, SearchThreadSettings } from "../search-index.js";
import { createVectorSearchWorker, MIN_CACHED_VECTORS, type VectorSearch } from "./knn-worker.js";
import { partitionLibrary } from "./vector-index.js";

/**
 * A fused search's two rankings on two search threads: the vector scan on `vectors`, BM25 from the word indexes on
 * `words`. rank-snippets posts the scan, then asks for BM25, so on two threads the request waits for the longer of
 * the two instead of both one after the other (one thread ran them in turn: at 1,000,000 snippets that was most of
 * a request; docs/benchmarks.md). Each thread keeps its own kind of copy, so memory is what one thread held.
 */
export function twoSearchThreads(vectors: VectorSearch, words: VectorSearch): VectorSearch {
  return {
    nearest: (vector, k, partition) => vectors.nearest(vector, k, partition),
    rankWords: (request) => words.rankWords(request),
    warm: (partition) => vectors.warm(partition),
    warmWords: (target) => words.warmWords(target),
    recountWords: () => words.recountWords(),
    touch: (partition) => vectors.touch(partition),
    retire(partition) {
      vectors.retire(partition);
      words.retire(partition);
    },
    async close() {
      await Promise.all([vectors.close(), words.close()]);
    },
  };
}

/** The server's search threads over the volume's two files: vectors on one, word indexes (from lds.db) on the other. */
export function startServerSearchThreads(files: { store: string; vectors: string }, settings: SearchThreadSettings, onPart: (made: IndexPartMade) => void): VectorSearch {
  return twoSearchThreads(
    createVectorSearchWorker(files.vectors, settings.timeoutMs, { budgetBytes: settings.vectorCacheBytes, minVectors: MIN_CACHED_VECTORS }, (copy) =>
      onPart({ kind: "vectors", library: partitionLibrary(copy.partition), rows: copy.vectors, bytes: copy.bytes, ms: copy.ms, overBudget: copy.overBudget }),
    ),
    createVectorSearchWorker(files.vectors, settings.timeoutMs, { budgetBytes: 0, minVectors: MIN_CACHED_VECTORS }, () => {}, {
      storeFile: files.store,
      options: { budgetBytes: settings.wordIndexBytes, minRows: MIN_CACHED_VECTORS },
      onIndex: (made) =>
        onPart({ kind: "words", library: made.libraryId + (made.version ? `@${made.version}` : ""), rows: made.rows, bytes: made.bytes, ms: made.ms, overBudget: made.overBudget, failed: made.failed }),
    }),
  );
}

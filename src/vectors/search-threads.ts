import type { VectorSearch } from "./knn-worker.js";

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
    retire(partition) {
      vectors.retire(partition);
      words.retire(partition);
    },
    async close() {
      await Promise.all([vectors.close(), words.close()]);
    },
  };
}

import { describe, expect, it } from "vitest";
import type { VectorSearch } from "../../../src/index/sqlite/knn-worker.js";
import { twoSearchThreads } from "../../../src/index/sqlite/search-threads.js";
import { MIN_CACHED_VECTORS } from "../../../src/index/sqlite/knn-worker.js";
import { probeBatch } from "../../../src/index/sqlite/prepare-batch.js";
import { partitionOf } from "../../../src/index/sqlite/vector-index.js";

/** A search thread that records what it was asked and answers when told to. */
function recordingThread(name: string, log: string[]) {
  const waiting: Array<() => void> = [];
  const answerLater = <T>(value: T) => new Promise<T>((resolve) => waiting.push(() => resolve(value)));
  const thread: VectorSearch = {
    nearest: (_vector, k, partition) => (log.push(`${name} nearest ${partition} ${k}`), answerLater([{ snippetId: 1, distance: 0.5 }])),
    rankWords: (request) => (log.push(`${name} rankWords ${request.libraryId}`), answerLater([{ id: 2, score: 3 }])),
    warm: async (partition) => void log.push(`${name} warm ${partition}`),
    warmWords: async (target) => void log.push(`${name} warmWords ${target.libraryId}`),
    recountWords: async () => void log.push(`${name} recountWords`),
    touch: async (partition) => void log.push(`${name} touch ${partition}`),
    retire: (partition) => void log.push(`${name} retire ${partition}`),
    close: async () => void log.push(`${name} close`),
  };
  return { thread, answer: () => waiting.splice(0).forEach((resolve) => resolve()) };
}

describe("two search threads", () => {
  it("send vectors to one and BM25 to the other, so that BM25 is answered while the scan still runs", async () => {
    const log: string[] = [];
    const vectors = recordingThread("vectors", log);
    const words = recordingThread("words", log);
    const search = twoSearchThreads(vectors.thread, words.thread);
    await search.warm("p1");
    await search.warmWords({ libraryId: "/a/b", version: "", batch: 1 });
    await search.recountWords();
    await search.touch("p1");
    const scan = search.nearest(new Float32Array(4), 10, "p1");
    const ranking = search.rankWords({ libraryId: "/a/b", version: "", batch: 1, words: ["x"], depth: 10 });
    words.answer();
    // The scan has not answered: BM25 did not wait for it.
    expect(await ranking).toEqual([{ id: 2, score: 3 }]);
    vectors.answer();
    expect(await scan).toEqual([{ snippetId: 1, distance: 0.5 }]);
    // A replaced batch: both threads drop what they hold of it (the copy, the word index).
    search.retire("p0");
    await search.close();
    expect(log).toEqual([
      "vectors warm p1",
      "words warmWords /a/b",
      "words recountWords",
      "vectors touch p1",
      "vectors nearest p1 10",
      "words rankWords /a/b",
      "vectors retire p0",
      "words retire p0",
      "vectors close",
      "words close",
    ]);
  });

  it("probe a published batch: the files checkpointed first, then its searches, its vectors touched and the IDFs recounted", async () => {
    const log: string[] = [];
    const vectors = recordingThread("vectors", log);
    const words = recordingThread("words", log);
    const search = twoSearchThreads(vectors.thread, words.thread);
    const answering = setInterval(() => (vectors.answer(), words.answer()), 1);
    try {
      const target = { libraryId: "/a/b", version: "", batch: 7 };
      const checkpoint = async () => void log.push("checkpoint");
      const found = await probeBatch(search, false, target, MIN_CACHED_VECTORS, { words: ["x"], vector: new Float32Array(4) }, undefined, checkpoint);
      expect(found).toEqual([1]);
      const partition = partitionOf("/a/b", "", 7);
      expect(log[0]).toBe("checkpoint");
      expect(log.slice(1, 5).sort()).toEqual([`vectors nearest ${partition} 100`, `vectors touch ${partition}`, "words rankWords /a/b", "words recountWords"].sort());
      // Two more rounds of the same search, so that the threads' ranking code is optimized before the first reader's.
      expect(log.slice(5)).toEqual([`vectors nearest ${partition} 100`, "words rankWords /a/b", `vectors nearest ${partition} 100`, "words rankWords /a/b"]);
      // A small batch is searched as stored: nothing to prepare, nothing asked.
      log.length = 0;
      expect(await probeBatch(search, false, target, MIN_CACHED_VECTORS - 1, { words: ["x"], vector: new Float32Array(4) }, undefined, checkpoint)).toEqual([]);
      expect(log).toEqual([]);
    } finally {
      clearInterval(answering);
    }
  });
});

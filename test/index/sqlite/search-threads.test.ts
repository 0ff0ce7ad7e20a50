import { describe, expect, it } from "vitest";
import type { VectorSearch } from "../../../src/index/sqlite/knn-worker.js";
import { twoSearchThreads } from "../../../src/index/sqlite/search-threads.js";

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
      "vectors nearest p1 10",
      "words rankWords /a/b",
      "vectors retire p0",
      "words retire p0",
      "vectors close",
      "words close",
    ]);
  });
});

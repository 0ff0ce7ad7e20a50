import { afterEach, describe, expect, it, vi } from "vitest";
import { ftsExpression } from "../../../src/index/sqlite/fts-expression.js";
import type { SqliteSearchIndex } from "../../../src/index/sqlite/sqlite-search-index.js";
import { rankSnippets } from "../../../src/search/rank-snippets.js";
import { liveBatch } from "../../../src/store/sqlite/snippet-batches.js";
import { bm25ScoredSnippets } from "../../../src/index/sqlite/snippet-search.js";
import { createWordSearch, type WordIndexMade, type WordSearch } from "../../../src/index/sqlite/word-search.js";
import { createVectorSearchWorker, type VectorSearch } from "../../../src/index/sqlite/knn-worker.js";
import { armFailpoint } from "../../../src/util/failpoint.js";
import { openVolume, type OpenVolume } from "../../../src/volume/open-volume.js";
import { tempDir } from "../../helpers/temp.js";
import { DOC_WORDS, wordSource } from "../../helpers/words.js";
import { dbOf } from "../../helpers/sqlite-db.js";

// Words with stems in common, case and diacritics FTS5 folds, a decomposed accent (U+0301) that JavaScript's cut
// splits where FTS5 does not (the row is then tokenized by FTS5 itself), and one FTS5 reads as two tokens.
// With the documentation words, most words are in fewer than half the rows, so their IDF is positive (FTS5 gives a
// word in more than half the rows an IDF of 1e-6, which would hide a stale one).
const VOCABULARY = [..."retry retrying retries timeout Timeout header headers café naïve ca\u0301fe Alpha ALPHA kappa stream_id socket".split(" "), ...DOC_WORDS];

const row = (word: () => string, i: number) => ({
  kind: "info" as const,
  title: `${word()} ${word()}`,
  description: i % 3 ? word() : "",
  language: null,
  content: Array.from({ length: 3 + (i % 11) }, word).join(" "),
  sourcePath: "a.md",
  tokens: 5,
  pageTitle: null,
});

async function ingest(volume: OpenVolume, libraryId: string, count: number, seed: number, alongside?: { libraryId: string; count: number }, vocabulary = VOCABULARY) {
  const { snippets } = volume.store;
  const word = wordSource(seed, vocabulary);
  const batch = await snippets.openBatch(libraryId, "");
  const other = alongside && (await snippets.openBatch(alongside.libraryId, ""));
  for (let i = 0; i < count; i++) {
    await snippets.appendToBatch(libraryId, "", batch, [row(word, i)]);
    // Another library ingested at the same time: its ids interleave with this one's.
    if (other !== undefined && i < alongside!.count) await snippets.appendToBatch(alongside!.libraryId, "", other, [row(word, i + 7)]);
  }
  await snippets.publishBatch(libraryId, "", batch);
  if (other !== undefined) await snippets.publishBatch(alongside!.libraryId, "", other);
}

async function setUp(): Promise<OpenVolume> {
  const volume = await openVolume(tempDir());
  for (const id of ["/a/one", "/b/two", "/c/three"]) dbOf(volume).prepare("INSERT INTO libraries (id, title, source, state) VALUES (?, ?, 'git', 'finalized')").run(id, id);
  open.push(volume);
  return volume;
}

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0).reverse()) o.close();
});

/** FTS5's ranking, as the server computed it before word indexes. */
const fts5 = (volume: OpenVolume, libraryId: string, words: string[], depth: number) => bm25ScoredSnippets(dbOf(volume), libraryId, "", ftsExpression(words)!, depth);

/**
 * The same ranking: every score equal to the last bit, in the same order, and the same snippets for each score
 * (the order among rows of equal score is not FTS5's to promise), except those tied with the last, cut by the limit.
 */
function expectSameRanking(got: Array<{ id: number; score: number }> | undefined, want: Array<{ id: number; score: number }>) {
  expect(got).toBeDefined();
  expect(got!.map((r) => r.score)).toEqual(want.map((r) => r.score));
  const last = want.at(-1)?.score;
  const byScore = (rows: typeof want) =>
    rows
      .filter((r) => r.score !== last)
      .map((r) => `${r.score}:${r.id}`)
      .sort();
  expect(byScore(got!)).toEqual(byScore(want));
}

const QUERIES = [["retry"], ["retrying", "timeout", "header"], ["cafe"], ["naive", "alpha", "headers"], ["socket", "kappa", "retries", "timeout"], ["nothingatall"], ["retry", "retries"]];

describe("BM25 from the search thread's word indexes", () => {
  it("ranks with FTS5's scores to the last bit, also after writes elsewhere change the table's statistics", async () => {
    const volume = await setUp();
    await ingest(volume, "/a/one", 1200, 3, { libraryId: "/b/two", count: 500 });
    const made: WordIndexMade[] = [];
    const search = createWordSearch(volume.engine.files(volume.paths).records, { budgetBytes: 64 * 2 ** 20, minRows: 1000, rowsPerSlice: 100 }, (m) => made.push(m));
    open.push(search);
    const request = (libraryId: string, words: string[], depth: number) => ({ libraryId, version: "", batch: liveBatch(dbOf(volume), libraryId, ""), words, depth });

    // No index yet: FTS5 ranks (the caller's fallback) while one is built.
    expect(search.rank(request("/a/one", ["retry"], 10))).toBeUndefined();
    await search.settled();
    expect(made).toEqual([expect.objectContaining({ libraryId: "/a/one", version: "", rows: 1200 })]);
    expect(made[0]!.overBudget).toBeUndefined();
    // /b/two is under minRows: never indexed, FTS5 keeps ranking it.
    expect(search.rank(request("/b/two", ["retry"], 10))).toBeUndefined();
    await search.settled();
    expect(made).toHaveLength(1);

    const before = fts5(volume, "/a/one", ["retry", "retries"], 50);
    for (const words of QUERIES) for (const depth of [10, 200]) expectSameRanking(search.rank(request("/a/one", words, depth)), fts5(volume, "/a/one", words, depth));

    // Another library's snippets change every IDF and the average size: read again from FTS5 at the next query.
    await ingest(volume, "/c/three", 400, 11, undefined, ["retry", "timeout", "socket", "cache"]);
    const after = fts5(volume, "/a/one", ["retry", "retries"], 50);
    expect(after.map((r) => r.score)).not.toEqual(before.map((r) => r.score));
    for (const words of QUERIES) expectSameRanking(search.rank(request("/a/one", words, 100)), fts5(volume, "/a/one", words, 100));

    // A word FTS5 reads as a phrase of two tokens needs positions the index does not keep: FTS5 ranks it.
    expect(search.rank(request("/a/one", ["stream_id"], 10))).toBeUndefined();
    expect(fts5(volume, "/a/one", ["stream_id"], 10).length).toBeGreaterThan(0);

    // A refresh publishes a new batch: the old one's index answers no more, the new one is built.
    const oldBatch = request("/a/one", ["retry"], 10);
    await ingest(volume, "/a/one", 1100, 5);
    expect(search.rank(oldBatch)).toBeUndefined();
    expect(search.rank(request("/a/one", ["retry"], 10))).toBeUndefined();
    await search.settled();
    expect(made.map((m) => m.rows)).toEqual([1200, 1100]);
    for (const words of QUERIES) expectSameRanking(search.rank(request("/a/one", words, 100)), fts5(volume, "/a/one", words, 100));
  });

  it("builds a batch's index while it is written, before its publication, and its searches use it from the first; the replaced batch's goes at once", async () => {
    const volume = await setUp();
    await ingest(volume, "/a/one", 1200, 3);
    const made: WordIndexMade[] = [];
    const search = createWordSearch(volume.engine.files(volume.paths).records, { budgetBytes: 64 * 2 ** 20, minRows: 1000, rowsPerSlice: 100 }, (m) => made.push(m));
    open.push(search);
    const request = (batch: number, words: string[]) => ({ libraryId: "/a/one", version: "", batch, words, depth: 50 });
    const replaced = liveBatch(dbOf(volume), "/a/one", "");
    await search.warm({ libraryId: "/a/one", version: "", batch: replaced });
    expect(search.rank(request(replaced, ["retry"]))).toBeDefined();

    // A refresh writes a new batch: warmed while it is still being written (readers do not see it yet).
    const { snippets } = volume.store;
    const batch = await snippets.openBatch("/a/one", "");
    const word = wordSource(5, VOCABULARY);
    await snippets.appendToBatch(
      "/a/one",
      "",
      batch,
      Array.from({ length: 1100 }, (_, i) => row(word, i)),
    );
    await search.warm({ libraryId: "/a/one", version: "", batch });
    expect(made).toEqual([expect.objectContaining({ rows: 1200 }), expect.objectContaining({ rows: 1100 })]);
    await snippets.publishBatch("/a/one", "", batch);
    // Its first search is answered from the index (FTS5's ranking, to the last bit), with nothing built after it.
    expectSameRanking(search.rank(request(batch, ["retrying", "timeout", "header"])), fts5(volume, "/a/one", ["retrying", "timeout", "header"], 50));
    await search.settled();
    expect(made).toHaveLength(2);
    // The replaced batch is retired: dropped now, never built again for a search that raced the swap.
    search.dropRetired();
    expect(search.rank(request(replaced, ["retry"]))).toBeUndefined();
    await search.warm({ libraryId: "/a/one", version: "", batch: replaced });
    expect(made).toHaveLength(2);
  });

  it("counts a new index's frequent terms again after its publication, so that its first searches count none", async () => {
    const volume = await setUp();
    await ingest(volume, "/a/one", 1200, 3);
    const search = createWordSearch(volume.engine.files(volume.paths).records, { budgetBytes: 64 * 2 ** 20, minRows: 1000, rowsPerSlice: 100, frequentTermRows: 50 });
    open.push(search);
    const request = (batch: number, words: string[]) => ({ libraryId: "/a/one", version: "", batch, words, depth: 50 });
    const replaced = liveBatch(dbOf(volume), "/a/one", "");
    await search.warm({ libraryId: "/a/one", version: "", batch: replaced });
    expect(search.rank(request(replaced, ["retrying", "timeout", "header"]))).toBeDefined();

    // A refresh, as the server makes it: the new batch's index is built before its publication. Its rows change
    // FTS5's structure, so every count read so far is forgotten.
    const { snippets } = volume.store;
    const batch = await snippets.openBatch("/a/one", "");
    const word = wordSource(5, VOCABULARY);
    await snippets.appendToBatch(
      "/a/one",
      "",
      batch,
      Array.from({ length: 1100 }, (_, i) => row(word, i)),
    );
    await search.warm({ libraryId: "/a/one", version: "", batch });
    await snippets.publishBatch("/a/one", "", batch);
    // Without a recount, a search counts its words (the cost the first searches after a publication paid).
    let counted = search.termCounts;
    expectSameRanking(search.rank(request(batch, ["alpha"])), fts5(volume, "/a/one", ["alpha"], 50));
    expect(search.termCounts).toBe(counted + 1);

    await search.recount();
    expect(search.termCounts).toBeGreaterThan(counted + 10);
    counted = search.termCounts;
    for (const words of [
      ["retrying", "timeout", "header"],
      ["naive", "headers", "socket"],
      ["kappa", "retries"],
    ]) {
      expectSameRanking(search.rank(request(batch, words)), fts5(volume, "/a/one", words, 50));
    }
    expect(search.termCounts).toBe(counted);
  });

  it("gives up an index over its memory budget, says so once, and leaves the ranking to FTS5", async () => {
    const volume = await setUp();
    await ingest(volume, "/a/one", 1200, 3);
    const made: WordIndexMade[] = [];
    const search: WordSearch = createWordSearch(volume.engine.files(volume.paths).records, { budgetBytes: 20_000, minRows: 1000, rowsPerSlice: 100 }, (m) => made.push(m));
    open.push(search);
    const request = { libraryId: "/a/one", version: "", batch: liveBatch(dbOf(volume), "/a/one", ""), words: ["retry"], depth: 10 };
    expect(search.rank(request)).toBeUndefined();
    await search.settled();
    expect(made).toEqual([expect.objectContaining({ libraryId: "/a/one", overBudget: true })]);
    expect(made[0]!.rows).toBeLessThan(1200);
    expect(search.rank(request)).toBeUndefined();
    await search.settled();
    expect(made).toHaveLength(1);
  });

  it("keeps the most recently searched indexes within the budget, and builds one that left again when it is searched", async () => {
    const volume = await setUp();
    await ingest(volume, "/a/one", 1200, 3);
    await ingest(volume, "/b/two", 1200, 4);
    const made: WordIndexMade[] = [];
    // Room for one index of 1,200 rows (about 60 KB each here), not two.
    const search = createWordSearch(volume.engine.files(volume.paths).records, { budgetBytes: 100_000, minRows: 1000 }, (m) => made.push(m));
    open.push(search);
    const request = (libraryId: string) => ({ libraryId, version: "", batch: liveBatch(dbOf(volume), libraryId, ""), words: ["retry"], depth: 10 });
    const indexedAs = async (libraryId: string) => {
      search.rank(request(libraryId));
      await search.settled();
      return search.rank(request(libraryId));
    };
    expectSameRanking(await indexedAs("/a/one"), fts5(volume, "/a/one", ["retry"], 10));
    expectSameRanking(await indexedAs("/b/two"), fts5(volume, "/b/two", ["retry"], 10));
    expect(made.map((m) => [m.libraryId, m.overBudget])).toEqual([
      ["/a/one", undefined],
      ["/b/two", undefined],
    ]);
    // /a/one's index left for /b/two's: ranked by FTS5 once more while it is built again.
    expectSameRanking(await indexedAs("/a/one"), fts5(volume, "/a/one", ["retry"], 10));
    expect(made.map((m) => m.libraryId)).toEqual(["/a/one", "/b/two", "/a/one"]);
  });

  it("serves the server's BM25 from the search thread, with the answer FTS5 gives", async () => {
    const volume = await setUp();
    await ingest(volume, "/a/one", 1200, 3, { libraryId: "/b/two", count: 300 });
    const made: WordIndexMade[] = [];
    let threads!: VectorSearch;
    const indexed = new Promise<void>((resolve) => {
      threads = createVectorSearchWorker(volume.engine.files(volume.paths).vectors, 30_000, { budgetBytes: 0, minVectors: 1000 }, () => {}, {
        storeFile: volume.engine.files(volume.paths).records,
        options: { budgetBytes: 64 * 2 ** 20, minRows: 1000 },
        onIndex: (m) => (made.push(m), resolve()),
      });
    });
    (volume.index as SqliteSearchIndex).useSearchThreads(threads);
    open.push({ close: () => void threads.close() });
    const ref = { libraryId: "/a/one", version: "" };
    // Which rankings the thread answered (an answer) and which it left to FTS5 (undefined).
    const asked = vi.spyOn(threads, "rankWords");
    const answeredByThread = async () => (await Promise.all(asked.mock.results.map((result) => result.value))).map((answer) => answer !== undefined);
    const fromFts5 = await rankSnippets(volume, ref, "retrying timeout for a header", "bm25", 100);
    expect(await answeredByThread()).toEqual([false]);
    await indexed;
    expect(made).toEqual([expect.objectContaining({ libraryId: "/a/one", rows: 1200 })]);
    const words = ["retrying", "timeout", "header"];
    expectSameRanking((await threads.rankWords({ ...ref, batch: liveBatch(dbOf(volume), "/a/one", ""), words, depth: 100 }))!, fts5(volume, "/a/one", words, 100));
    const fromIndex = await rankSnippets(volume, ref, "retrying timeout for a header", "bm25", 100);
    expect(new Set(fromIndex)).toEqual(new Set(fromFts5));
    // Fused ranking works with both halves in the thread.
    expect((await rankSnippets(volume, ref, "retrying timeout for a header", "fused", 10)).length).toBe(10);
    expect(await answeredByThread()).toEqual([false, true, true, true]);
  });

  it("ranks with FTS5 when the search thread fails, instead of failing the search", async () => {
    const volume = await setUp();
    await ingest(volume, "/a/one", 1200, 3);
    const ref = { libraryId: "/a/one", version: "" };
    const expected = await rankSnippets(volume, ref, "retrying timeout header", "bm25", 50);
    const threads = createVectorSearchWorker(volume.engine.files(volume.paths).vectors, 30_000, { budgetBytes: 0, minVectors: 1000 }, () => {}, {
      storeFile: volume.engine.files(volume.paths).records,
      options: { budgetBytes: 64 * 2 ** 20, minRows: 1000 },
    });
    (volume.index as SqliteSearchIndex).useSearchThreads(threads);
    open.push({ close: () => void threads.close() });
    // The thread exits at its first query (a test hook; the thread starts at the first query, given the armed hook).
    armFailpoint("vector-search-crash");
    let failed: Promise<unknown>;
    try {
      failed = threads.rankWords({ ...ref, batch: liveBatch(dbOf(volume), "/a/one", ""), words: ["retry"], depth: 10 });
    } finally {
      armFailpoint(undefined);
    }
    await expect(failed).rejects.toThrow(/exited with code 70/);
    armFailpoint("vector-search-crash");
    try {
      expect(await rankSnippets(volume, ref, "retrying timeout header", "bm25", 50)).toEqual(expected);
    } finally {
      armFailpoint(undefined);
    }
  });
});

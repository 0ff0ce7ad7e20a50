import { describe, expect, it } from "vitest";
import { openVolume } from "../../../src/volume/open-volume.js";
import { bm25ScoredSnippets } from "../../../src/index/sqlite/snippet-search.js";
import { liveBatch } from "../../../src/store/sqlite/snippet-batches.js";
import { tempDir } from "../../helpers/temp.js";
import { wordSource } from "../../helpers/words.js";
import { dbOf } from "../../helpers/sqlite-db.js";

const word = wordSource(3, "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega retry timeout header".split(" "));
const row = (i: number) => {
  const content = Array.from({ length: 4 + (i % 9) }, word).join(" ");
  return { kind: "info" as const, title: `${word()} ${i}`, description: word(), language: null, content, sourcePath: "a.md", tokens: 5, pageTitle: null };
};

/** The ranking with every row's owner checked: what bm25ScoredSnippets must always answer. */
function reference(db: import("better-sqlite3").Database, libraryId: string, expression: string, depth: number) {
  return db
    .prepare(
      `SELECT s.id AS id, -bm25(snippets_fts, 4.0, 2.0, 1.0) AS score FROM snippets_fts JOIN snippets s ON s.id = snippets_fts.rowid
       WHERE snippets_fts MATCH ? AND s.library_id = ? AND s.version = '' AND s.batch = ? ORDER BY score DESC LIMIT ?`,
    )
    .all(expression, libraryId, liveBatch(db, libraryId, ""), depth) as Array<{ id: number; score: number }>;
}

/** Equal rankings: the same scores in order, and the same snippets wherever a score is not tied with the last one. */
function expectSameRanking(got: Array<{ id: number; score: number }>, want: Array<{ id: number; score: number }>) {
  expect(got.map((r) => r.score.toFixed(9))).toEqual(want.map((r) => r.score.toFixed(9)));
  const last = want.at(-1)?.score ?? 0;
  const clear = (rows: typeof got) => new Set(rows.filter((r) => r.score > last + 1e-9).map((r) => r.id));
  expect(clear(got)).toEqual(clear(want));
}

describe("BM25 ranking within a batch's id range", () => {
  it("answers as the owner-checked ranking does, with another library's rows inside the range or not", async () => {
    const volume = await openVolume(tempDir());
    try {
      const { snippets } = volume.store;
      for (const id of ["/a/one", "/b/two", "/c/alone"]) dbOf(volume).prepare("INSERT INTO libraries (id, title, source, state) VALUES (?, ?, 'git', 'finalized')").run(id, id);
      // Two ingestions at the same time: their ids interleave, so each batch's range holds the other's rows.
      const one = await snippets.openBatch("/a/one", "");
      const two = await snippets.openBatch("/b/two", "");
      for (let i = 0; i < 300; i++) {
        await snippets.appendToBatch("/a/one", "", one, [row(i)]);
        await snippets.appendToBatch("/b/two", "", two, [row(i + 1000), row(i + 2000)]);
      }
      await snippets.publishBatch("/a/one", "", one);
      await snippets.publishBatch("/b/two", "", two);
      const alone = await snippets.openBatch("/c/alone", "");
      await snippets.appendToBatch(
        "/c/alone",
        "",
        alone,
        Array.from({ length: 300 }, (_, i) => row(i + 3000)),
      );
      await snippets.publishBatch("/c/alone", "", alone);

      for (const expression of ['"retry"', '"alpha" OR "omega" OR "header"', '"kappa" OR "nothing"']) {
        for (const libraryId of ["/a/one", "/b/two", "/c/alone"]) {
          // depth 10: the range's best rows hold enough of the library's own; depth 200: too few, the owner-checked
          // ranking runs instead.
          for (const depth of [10, 200]) expectSameRanking(bm25ScoredSnippets(dbOf(volume), libraryId, "", expression, depth), reference(dbOf(volume), libraryId, expression, depth));
        }
      }
      expect(bm25ScoredSnippets(dbOf(volume), "/a/one", "", '"retry"', 10)).toHaveLength(10);
    } finally {
      volume.close();
    }
  });
});

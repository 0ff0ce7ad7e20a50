import path from "node:path";
import { describe, expect, it } from "vitest";
// The evaluation shared with `npm run bench` (bench/eval.js), given the sources instead of dist/.
import { evaluate, SETS } from "../../bench/lib/evaluate.js";
import { collectDocuments } from "../../src/indexing/collect.js";
import { parseDocuments } from "../../src/indexing/parse-documents.js";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { queryTerms } from "../../src/index/query-terms.js";
import { ftsExpression } from "../../src/index/sqlite/fts-expression.js";
import { sqliteDatabaseOf } from "../../src/engine/sqlite/open-databases.js";
import { rankSnippets } from "../../src/search/rank-snippets.js";
import { ROOT } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

describe("hybrid ranking", () => {
  // Regression guards at the levels measured when the score fusion was chosen (docs/benchmarks.md).
  for (const [set, floor] of [
    [SETS.tuning, { questions: 60, hit1: 0.93 }],
    [SETS.heldOut, { questions: 40, hit1: 0.83 }],
  ] as const) {
    it(`ranks at least as well as BM25 alone at hit@1 and hit@5, and better than vectors, on fixtures/${set}`, async () => {
      const report = await evaluate({ openVolume, sqliteDatabaseOf, collectDocuments, parseDocuments, replaceLibrarySnippets, rankSnippets }, ROOT, path.join(tempDir(), "eval"), set);
      const { bm25, vector, fused } = report.results as Record<string, { hit1: number; hit5: number }>;
      expect(report.questions).toBeGreaterThanOrEqual(floor.questions);
      expect(fused!.hit1).toBeGreaterThanOrEqual(bm25!.hit1);
      expect(fused!.hit5).toBeGreaterThanOrEqual(bm25!.hit5);
      expect(fused!.hit1).toBeGreaterThan(vector!.hit1);
      expect(fused!.hit5).toBeGreaterThanOrEqual(vector!.hit5);
      expect(fused!.hit1).toBeGreaterThanOrEqual(floor.hit1);
    });
  }

  it("reads every query as plain words: FTS5 syntax in a query is neither an error nor an operator", () => {
    for (const hostile of ['"unterminated', "NEAR(a b)", "title:secret", "a* OR b", "-x AND (y", "\u0000😀"]) {
      const expression = ftsExpression(queryTerms(hostile));
      if (expression) expect(expression).toMatch(/^"[^"]*"( OR "[^"]*")*$/);
    }
    expect(queryTerms("How do I add a route?")).toEqual(["add", "route"]);
    // A query of stop words only still means something.
    expect(queryTerms("how to")).toEqual(["how", "to"]);
    expect(ftsExpression(queryTerms("?!"))).toBeNull();
  });
});

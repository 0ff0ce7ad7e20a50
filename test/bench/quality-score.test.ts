import path from "node:path";
import { describe, expect, it } from "vitest";
// The external quality benchmark's scorer (bench/quality/score.js) over a real volume and the real rankings, given
// the sources instead of dist/ as test/search/ranking.test.ts does for bench/lib/evaluate.js.
import { scoreQuestion } from "../../bench/quality/metrics.js";
import { METHODS, scoreQuestions } from "../../bench/quality/score.js";
import { collectDocuments } from "../../src/indexing/collect.js";
import { parseDocuments } from "../../src/indexing/parse-documents.js";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { sqliteDatabaseOf } from "../../src/engine/sqlite/open-databases.js";
import { rankSnippets } from "../../src/search/rank-snippets.js";
import { ROOT } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

describe("quality benchmark scorer", () => {
  it("ranks each question with every method, maps the snippets to pages and scores those pages", async () => {
    const volume = await openVolume(path.join(tempDir(), "quality"));
    try {
      const db = sqliteDatabaseOf(volume.store);
      const docs = path.join(ROOT, "fixtures/docs/tidewater");
      db.prepare("INSERT INTO libraries (id, title, source, state) VALUES ('/t/tidewater', 'tidewater', 'git', 'finalized')").run();
      await replaceLibrarySnippets(volume, "/t/tidewater", parseDocuments(docs, collectDocuments(docs)));
      const sourcePath = db.prepare("SELECT source_path FROM snippets WHERE id = ?").pluck();
      const questions: Array<{ id: string; project: string; kind: string; question: string; qrels: Record<string, number> }> = [
        { id: "t-1", project: "tidewater", kind: "api", question: "which status codes are retried automatically", qrels: { "docs/retries.md": 3, "docs/timeouts.md": 1 } },
        { id: "t-2", project: "tidewater", kind: "api", question: "add a bearer token header to every request", qrels: { "docs/interceptors.md": 3 } },
      ];
      const records = await scoreQuestions({ rankSnippets, sourcePathOf: (id: number) => sourcePath.get(id) as string }, volume, questions, { tidewater: "/t/tidewater" });

      expect(records).toHaveLength(questions.length * METHODS.length);
      for (const r of records) {
        // Pages, not sections: no anchor, each page once, and the scores are those of these pages.
        expect(r.pages.length).toBeGreaterThan(0);
        for (const page of r.pages) expect(page).not.toContain("#");
        expect(new Set(r.pages).size).toBe(r.pages.length);
        expect(r.scores).toEqual(scoreQuestion(r.pages, r.qrels));
        expect(["tuning", "heldOut"]).toContain(r.half);
      }
      // Words the answering pages share with the questions: BM25 puts the right page first for both.
      const bm25 = records.filter((r) => r.method === "bm25");
      expect(bm25.map((r) => [r.id, r.pages[0]])).toEqual([
        ["t-1", "docs/retries.md"],
        ["t-2", "docs/interceptors.md"],
      ]);
      expect(bm25.every((r) => r.scores.mrr === 1 && r.scores.hit1 === 1)).toBe(true);
    } finally {
      volume.close();
    }
  });
});

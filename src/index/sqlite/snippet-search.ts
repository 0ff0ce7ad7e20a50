import type Database from "better-sqlite3";
import { liveBatchWithRange } from "../../store/sqlite/batch-id-range.js";
import { liveBatch } from "../../store/sqlite/snippet-batches.js";
import { ftsExpression } from "./fts-expression.js";

/**
 * Full-text search over snippets with SQLite's FTS5 (an engine-only feature, kept in this one module: another store
 * engine brings its own). `expression` is an FTS5 query built by fts-expression.ts from a query's terms, never a client's text.
 */

// Every query below checks each matching row's owner through snippets_owner (schema 11), a covering index: the
// planner would otherwise read the table's text-laden pages for it.

/** BM25 weights of title, description and content: a query word in a section's title says most about it. */
export const COLUMN_WEIGHTS = [4, 2, 1];
const BM25 = `bm25(snippets_fts, ${COLUMN_WEIGHTS.map((w) => w.toFixed(1)).join(", ")})`;

/**
 * A library version's snippets matching `expression` with their BM25 relevance (higher is better), best first.
 * FTS5 scores every matching row; checking each one's owner on top of that cost a third of the time in a library of
 * 100,000 snippets (BM25 was a search's longest step). So the rows are first limited to the live batch's id range,
 * which FTS5 applies while it reads its index, and the owner is checked only for the best of them. Other rows in
 * that range (another library ingested at the same time) are dropped there; if that leaves too few, the search runs
 * again with the owner checked for every row, so the answer is always the same.
 */
export function bm25ScoredSnippets(db: Database.Database, libraryId: string, version: string, expression: string, depth: number): Array<{ id: number; score: number }> {
  const { batch, range } = liveBatchWithRange(db, libraryId, version);
  if (range) {
    const limit = depth + Math.max(50, depth >> 1);
    const rows = db
      .prepare(`SELECT rowid AS id, -${BM25} AS score FROM snippets_fts WHERE snippets_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY score DESC LIMIT ?`)
      .all(expression, range.lowest, range.highest, limit) as Array<{ id: number; score: number }>;
    const owned = new Set(
      db
        .prepare("SELECT id FROM snippets INDEXED BY snippets_owner WHERE id IN (SELECT value FROM json_each(?)) AND library_id = ? AND version = ? AND batch = ?")
        .pluck()
        .all(JSON.stringify(rows.map((row) => row.id)), libraryId, version, batch) as number[],
    );
    const kept = rows.filter((row) => owned.has(row.id));
    if (kept.length >= depth || rows.length < limit) return kept.slice(0, depth);
  }
  return db
    .prepare(
      `SELECT s.id AS id, -${BM25} AS score FROM snippets_fts JOIN snippets s INDEXED BY snippets_owner ON s.id = snippets_fts.rowid
       WHERE snippets_fts MATCH ? AND s.library_id = ? AND s.version = ? AND s.batch = ?
       ORDER BY score DESC LIMIT ?`,
    )
    .all(expression, libraryId, version, batch, depth) as Array<{ id: number; score: number }>;
}

/** The ids of a library version's snippets matching any of `terms` (index/query-terms.ts), best BM25 first. */
export function bm25SnippetIds(db: Database.Database, libraryId: string, version: string, terms: string[], depth: number): number[] {
  const expression = ftsExpression(terms);
  return expression ? bm25ScoredSnippets(db, libraryId, version, expression, depth).map((hit) => hit.id) : [];
}

/**
 * Libraries scored by their best snippet's relevance to `expression`: higher is more relevant, 0 when nothing
 * matches. (FTS5's bm25() is negative, lower better, and cannot be aggregated: the best row is taken instead.)
 */
export function libraryRelevance(db: Database.Database, expression: string, libraryIds: string[]): Map<string, number> {
  const best = db.prepare(
    `SELECT bm25(snippets_fts) AS score FROM snippets_fts JOIN snippets s INDEXED BY snippets_owner ON s.id = snippets_fts.rowid
     WHERE snippets_fts MATCH ? AND s.library_id = ? AND s.version = '' AND s.batch = ? ORDER BY score LIMIT 1`,
  );
  return new Map(libraryIds.map((id) => [id, -((best.pluck().get(expression, id, liveBatch(db, id, "")) as number | null) ?? 0)]));
}

import type Database from "better-sqlite3";
import { liveBatch } from "./snippet-batches.js";
import type { EmbeddableSnippet, SnippetTotals, StoredSnippet } from "../records.js";

/** How many snippets a library version holds ("" = its current content), of one kind or of both. */
export function countSnippets(db: Database.Database, libraryId: string, version = "", kind?: "code" | "info"): number {
  const byKind = kind ? " AND kind = ?" : "";
  const batch = liveBatch(db, libraryId, version);
  const params = kind ? [libraryId, version, batch, kind] : [libraryId, version, batch];
  return db
    .prepare(`SELECT count(*) FROM snippets WHERE library_id = ? AND version = ? AND batch = ?${byKind}`)
    .pluck()
    .get(...params) as number;
}

/**
 * Number and tokens of a library's current snippets, for search results and the dashboard: kept with the live
 * batch's record (schema 12, added up as its chunks were written); counted from the rows only for rows from before
 * batches (batch 0), whose totals nothing kept.
 */
export function snippetTotals(db: Database.Database, libraryId: string): SnippetTotals {
  const kept = db.prepare("SELECT snippets AS n, tokens FROM snippet_batches WHERE library_id = ? AND version = '' AND state = 'live' AND snippets IS NOT NULL").get(libraryId) as SnippetTotals | undefined;
  if (kept) return kept;
  return db.prepare("SELECT count(*) AS n, coalesce(sum(tokens), 0) AS tokens FROM snippets WHERE library_id = ? AND version = '' AND batch = ?").get(libraryId, liveBatch(db, libraryId, "")) as SnippetTotals;
}

/** Whether the volume holds any snippet at all (a new volume holds none: nothing to embed). */
export function hasAnySnippet(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM snippets LIMIT 1").get() !== undefined;
}

/**
 * These snippets of one library version, in the order asked; ids no longer served are left out (a batch published
 * between a search's ranking and this load leaves the answer shorter for that one request, never mixed).
 */
export function loadSnippets(db: Database.Database, libraryId: string, version: string, ids: number[]): StoredSnippet[] {
  // One prepared lookup per id: a context answer loads up to a hundred, by primary key. The columns are named as the
  // record's fields in the query, so that rows come out as records with no mapping step on this hot path.
  const load = db.prepare(
    "SELECT id, kind, title, description, language, content, source_path AS sourcePath, page_title AS pageTitle FROM snippets WHERE id = ? AND library_id = ? AND version = ? AND batch = ?",
  );
  const batch = liveBatch(db, libraryId, version);
  return ids.map((id) => load.get(id, libraryId, version, batch) as StoredSnippet | undefined).filter((row): row is StoredSnippet => row !== undefined);
}

/** Every snippet, in pages of `size` by id, for rebuilding the vector index without holding them all. */
export function* snippetPages(db: Database.Database, size: number): Generator<EmbeddableSnippet[]> {
  const page = db.prepare("SELECT id, library_id AS libraryId, version, batch, title, description, content FROM snippets WHERE id > ? ORDER BY id LIMIT ?");
  for (let after = 0; ;) {
    const rows = page.all(after, size) as EmbeddableSnippet[];
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.id;
  }
}

export function countAllSnippets(db: Database.Database): number {
  return db.prepare("SELECT count(*) FROM snippets").pluck().get() as number;
}

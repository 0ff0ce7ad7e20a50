import type Database from "better-sqlite3";

/** How many snippets a library version holds ("" = its current content), of one kind or of both. */
export function countSnippets(db: Database.Database, libraryId: string, version = "", kind?: "code" | "info"): number {
  const byKind = kind ? " AND kind = ?" : "";
  const params = kind ? [libraryId, version, kind] : [libraryId, version];
  return db.prepare(`SELECT count(*) FROM snippets WHERE library_id = ? AND version = ?${byKind}`).pluck().get(...params) as number;
}

/** Number and tokens of a library's current snippets, for search results. */
export function snippetTotals(db: Database.Database, libraryId: string): { n: number; tokens: number } {
  return db.prepare("SELECT count(*) AS n, coalesce(sum(tokens), 0) AS tokens FROM snippets WHERE library_id = ? AND version = ''").get(libraryId) as { n: number; tokens: number };
}

/** Whether the volume holds any snippet at all (a new volume holds none: nothing to embed). */
export function hasAnySnippet(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM snippets LIMIT 1").get() !== undefined;
}

export interface StoredSnippet extends SnippetText {
  id: number;
  source_path: string | null;
  page_title: string | null;
}

/** These snippets of one library version, in the order asked; ids no longer there are left out. */
export function loadSnippets(db: Database.Database, libraryId: string, version: string, ids: number[]): StoredSnippet[] {
  // One prepared lookup per id: a context answer loads up to a hundred, by primary key.
  const load = db.prepare("SELECT id, kind, title, description, language, content, source_path, page_title FROM snippets WHERE id = ? AND library_id = ? AND version = ?");
  return ids.map((id) => load.get(id, libraryId, version) as StoredSnippet | undefined).filter((row): row is StoredSnippet => row !== undefined);
}

/** What a snippet's vector is made from, with where the vector belongs. */
export interface EmbeddableSnippet {
  id: number;
  library_id: string;
  version: string;
  title: string;
  description: string;
  content: string;
}

/** Every snippet, in pages of `size` by id, for rebuilding the vector index without holding them all. */
export function* snippetPages(db: Database.Database, size: number): Generator<EmbeddableSnippet[]> {
  const page = db.prepare("SELECT id, library_id, version, title, description, content FROM snippets WHERE id > ? ORDER BY id LIMIT ?");
  for (let after = 0; ; ) {
    const rows = page.all(after, size) as EmbeddableSnippet[];
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.id;
  }
}

export function countAllSnippets(db: Database.Database): number {
  return db.prepare("SELECT count(*) FROM snippets").pluck().get() as number;
}

/** What a snippet says: code with its explanation, or a prose section. */
export interface SnippetText {
  kind: "code" | "info";
  title: string;
  description: string;
  language: string | null;
  content: string;
}

/** A snippet to store: its text and where it comes from. */
export interface NewSnippet extends SnippetText {
  /** path#anchor */
  sourcePath: string;
  tokens: number;
  pageTitle: string | null;
}

/**
 * Replace a library version's snippets ("" = its current content) in one transaction, so that readers see the old
 * set or the new one. `alongside` runs inside it with the new ids (the vector index writes their rows there).
 * Returns the ids of the replaced snippets, whose vectors the caller removes afterwards.
 */
export function swapSnippets(db: Database.Database, libraryId: string, version: string, rows: NewSnippet[], alongside: (newIds: number[]) => void): number[] {
  const oldIds = db.prepare("SELECT id FROM snippets WHERE library_id = ? AND version = ? ORDER BY id").pluck().all(libraryId, version) as number[];
  const insert = db.prepare(
    `INSERT INTO snippets (library_id, version, kind, title, description, language, content, source_path, tokens, page_title)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.exec("BEGIN IMMEDIATE");
  try {
    const newIds = rows.map((s) => Number(insert.run(libraryId, version, s.kind, s.title, s.description, s.language, s.content, s.sourcePath, s.tokens, s.pageTitle).lastInsertRowid));
    alongside(newIds);
    // New rows get rowids above every existing one (SQLite assigns max(rowid) + 1), so the old set is "this
    // library's ids up to the largest old id": one bound value, however many snippets (SQLite caps bound
    // variables at 32,766, which an id list would exceed on a large library).
    if (oldIds.length) db.prepare("DELETE FROM snippets WHERE library_id = ? AND version = ? AND id <= ?").run(libraryId, version, oldIds[oldIds.length - 1]);
    db.exec("COMMIT");
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
  return oldIds;
}

import type Database from "better-sqlite3";

/** How many snippets a library version holds ("" = its current content), of one kind or of both. */
export function countSnippets(db: Database.Database, libraryId: string, version = "", kind?: "code" | "info"): number {
  const byKind = kind ? " AND kind = ?" : "";
  const params = kind ? [libraryId, version, kind] : [libraryId, version];
  return db.prepare(`SELECT count(*) FROM snippets WHERE library_id = ? AND version = ?${byKind}`).pluck().get(...params) as number;
}

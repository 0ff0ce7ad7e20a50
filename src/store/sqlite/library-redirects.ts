import type Database from "better-sqlite3";

/** A library id that changed (schema 13 moved private libraries to /~team-<N>/...): the old id and the new one. */
export interface LibraryRedirect {
  oldId: string;
  newId: string;
}

/** The id a library now has that was once `oldId`, if one was renamed from it. */
export function libraryRedirect(db: Database.Database, oldId: string): string | undefined {
  return db.prepare("SELECT new_id FROM library_redirects WHERE old_id = ?").pluck().get(oldId) as string | undefined;
}

/** Renames whose vectors (vectors.db, partitioned by library id) have not followed yet. */
export function redirectsWithVectorsToMove(db: Database.Database): LibraryRedirect[] {
  return db.prepare("SELECT old_id AS oldId, new_id AS newId FROM library_redirects WHERE vectors_moved = 0 ORDER BY old_id").all() as LibraryRedirect[];
}

export function markVectorsMoved(db: Database.Database, oldId: string): void {
  db.prepare("UPDATE library_redirects SET vectors_moved = 1 WHERE old_id = ?").run(oldId);
}

/** The ids of every snippet of a library, all versions and batches. */
export function librarySnippetIds(db: Database.Database, libraryId: string): number[] {
  return db.prepare("SELECT id FROM snippets WHERE library_id = ?").pluck().all(libraryId) as number[];
}

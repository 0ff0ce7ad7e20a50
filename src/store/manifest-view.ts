import type Database from "better-sqlite3";

/** A library as an archive's manifest lists it. */
export interface ManifestLibraryRow {
  id: string;
  title: string;
  state: string;
  snippets: number;
}

/**
 * What an archive's manifest says about a database copy: its libraries with their snippet counts, and those that
 * were being indexed when it was taken. A database of schema 1 (no libraries yet) has none.
 */
export function librariesOfSnapshot(db: Database.Database): { libraries: ManifestLibraryRow[]; partial: string[] } {
  const hasLibraries = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'libraries'").get();
  if (!hasLibraries) return { libraries: [], partial: [] };
  const libraries = db
    .prepare(
      `SELECT l.id, l.title, l.state, (SELECT count(*) FROM snippets s WHERE s.library_id = l.id) AS snippets
       FROM libraries l ORDER BY l.id`,
    )
    .all() as ManifestLibraryRow[];
  const partial = db
    .prepare(
      `SELECT id FROM libraries WHERE state IN ('fetching','parsing','embedding')
       UNION SELECT library_id FROM jobs WHERE state = 'running' ORDER BY 1`,
    )
    .pluck()
    .all() as string[];
  return { libraries, partial };
}

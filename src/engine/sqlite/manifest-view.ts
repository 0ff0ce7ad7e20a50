import type Database from "better-sqlite3";
import { LIVE_ROW } from "../../store/sqlite/snippet-batches.js";
import type { SnapshotLibrary } from "../engine.js";

/**
 * What an archive's manifest says about a database copy: its libraries with their snippet counts, and those that
 * were being indexed when it was taken. A database of schema 1 (no libraries yet) has none.
 */
export function librariesOfSnapshot(db: Database.Database): { libraries: SnapshotLibrary[]; partial: string[] } {
  const hasLibraries = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'libraries'").get();
  if (!hasLibraries) return { libraries: [], partial: [] };
  const libraries = db
    .prepare(
      `SELECT l.id, l.title, l.state, (SELECT count(*) FROM snippets s WHERE s.library_id = l.id AND ${LIVE_ROW}) AS snippets
       FROM libraries l ORDER BY l.id`,
    )
    .all() as SnapshotLibrary[];
  const partial = db
    .prepare(
      `SELECT id FROM libraries WHERE state IN ('fetching','parsing','embedding')
       UNION SELECT library_id FROM jobs WHERE state = 'running' ORDER BY 1`,
    )
    .pluck()
    .all() as string[];
  return { libraries, partial };
}

/**
 * Snippet counts per library (all versions, the batches readers see), as the manifest counts them: a restore drill
 * compares the two.
 */
export function snippetCountsOfSnapshot(db: Database.Database): Map<string, number> {
  const rows = db.prepare(`SELECT s.library_id AS id, count(*) AS n FROM snippets s WHERE ${LIVE_ROW} GROUP BY s.library_id`).all() as Array<{ id: string; n: number }>;
  return new Map(rows.map((r) => [r.id, r.n]));
}

/**
 * Titles of up to `per` snippets of the current content of up to `libraries` libraries (spread over them, and over
 * each library's snippets): a drill's canary queries. The ids come from an index and only the chosen rows are
 * read: reading every title of a library reads its whole content (1 s for 20 libraries of the 1 GiB benchmark
 * volume, a second added to every backup; 10 ms this way).
 */
export function canaryTitles(db: Database.Database, per: number, libraries: number): Array<{ libraryId: string; titles: string[] }> {
  const hasLibraries = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'libraries'").get();
  if (!hasLibraries) return [];
  const all = db.prepare("SELECT id FROM libraries ORDER BY id").pluck().all() as string[];
  const every = Math.max(1, Math.ceil(all.length / libraries));
  const ids = all.filter((_, i) => i % every === 0);
  const snippetIds = db.prepare(`SELECT s.id FROM snippets s WHERE s.library_id = ? AND s.version = '' AND ${LIVE_ROW} ORDER BY s.id`).pluck();
  const titleOf = db.prepare("SELECT title FROM snippets WHERE id = ?").pluck();
  return ids.map((libraryId) => {
    const snippets = snippetIds.all(libraryId) as number[];
    const step = Math.max(1, Math.floor(snippets.length / per));
    const titles = new Set<string>();
    // From each step's first snippet on, the first title long enough to search for.
    for (let start = 0; start < snippets.length && titles.size < per; start += step) {
      for (let i = start; i < Math.min(start + step, snippets.length); i++) {
        const title = titleOf.get(snippets[i]) as string;
        if (title.length >= 3) {
          titles.add(title);
          break;
        }
      }
    }
    return { libraryId, titles: [...titles] };
  });
}

/** FTS5's own consistency check of the full-text index against the snippets; throws when they disagree. */
export function checkFullTextIndex(db: Database.Database): void {
  db.prepare("INSERT INTO snippets_fts(snippets_fts) VALUES ('integrity-check')").run();
}

/**
 * The ids of the snippets readers see, in pages by id, leaving out the given libraries (those being indexed when the
 * snapshot was taken: their new batch may have been half written when the vector index was copied).
 */
export function* servedSnippetIdPages(db: Database.Database, skip: ReadonlySet<string>, size = 2000): Generator<number[]> {
  const page = db.prepare(`SELECT s.id, s.library_id FROM snippets s WHERE s.id > ? AND ${LIVE_ROW} ORDER BY s.id LIMIT ?`);
  for (let after = 0; ;) {
    const rows = page.all(after, size) as Array<{ id: number; library_id: string }>;
    if (rows.length === 0) return;
    yield rows.filter((r) => !skip.has(r.library_id)).map((r) => r.id);
    after = rows[rows.length - 1]!.id;
  }
}

import type { LibraryVersion } from "../records.js";
import type { VersionStore } from "../store.js";
import { NOW_TEXT } from "./schema-text.js";
import type { PgContext } from "./sql.js";

/** A library's pinned versions. Names sort as lds.db sorts them (binary, "C"), whatever the database's collation. */
export function versionStore({ sql }: PgContext): VersionStore {
  return {
    list: (libraryId) => sql.rows<LibraryVersion>('SELECT name, ref FROM library_versions WHERE library_id = $1 ORDER BY name COLLATE "C"', [libraryId]),
    names: async (libraryId, order = "name") => {
      const by = order === "name" ? 'name COLLATE "C"' : "fetched_at DESC";
      return (await sql.rows<{ name: string }>(`SELECT name FROM library_versions WHERE library_id = $1 ORDER BY ${by}`, [libraryId])).map((r) => r.name);
    },
    commit: async (libraryId, name) => (await sql.row<{ commit_sha: string | null }>("SELECT commit_sha FROM library_versions WHERE library_id = $1 AND name = $2", [libraryId, name]))?.commit_sha ?? undefined,
    record: async (libraryId, version) => {
      await sql.run(
        `INSERT INTO library_versions (library_id, name, ref, commit_sha) VALUES ($1, $2, $3, $4)
         ON CONFLICT (library_id, name) DO UPDATE SET ref = excluded.ref, commit_sha = excluded.commit_sha, fetched_at = ${NOW_TEXT}`,
        [libraryId, version.name, version.ref, version.commit],
      );
    },
  };
}

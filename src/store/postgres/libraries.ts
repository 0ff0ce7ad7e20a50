import { LIBRARY_COLUMNS, parseBranches, toLibrary, type LibraryRow } from "../library-row.js";
import type { LibraryStore } from "../store.js";
import { createLibraryWithJob, insertLibrary, optionsKey, queueLibraryJob, relocateLibrary, removeLibrary, setLibraryState } from "./library-changes.js";
import { getSetting } from "./settings.js";
import type { PgContext } from "./sql.js";

/** lds.db orders ids with SQLite's binary collation: "C" here, whatever the database's own collation is. */
const BY_ID = 'ORDER BY id COLLATE "C"';

export function libraryStore(context: PgContext): LibraryStore {
  const { sql } = context;
  const many = async (where: string, params: unknown[]) => (await sql.rows<LibraryRow>(`SELECT ${LIBRARY_COLUMNS} FROM libraries ${where} ${BY_ID}`, params)).map(toLibrary);
  return {
    find: async (id) => {
      const row = await sql.row<LibraryRow>(`SELECT ${LIBRARY_COLUMNS} FROM libraries WHERE id = $1`, [id]);
      return row && toLibrary(row);
    },
    list: () => many("", []),
    bySource: (sourceKey) => many("WHERE source_key = $1", [sourceKey]),
    redirect: async (oldId) => (await sql.row<{ new_id: string }>("SELECT new_id FROM library_redirects WHERE old_id = $1", [oldId]))?.new_id,
    create: (library) => insertLibrary(sql, library),
    createWithJob: (library, options, payload, token) => createLibraryWithJob(context, library, options, payload, token),
    queueJob: (libraryId, job, token, markQueued) => queueLibraryJob(context, libraryId, job, token, markQueued),
    relocate: (move) => relocateLibrary(context, move),
    options: async (id) => JSON.parse((await getSetting(sql, optionsKey(id))) ?? "{}") as Awaited<ReturnType<LibraryStore["options"]>>,
    servedBranches: async (id) => parseBranches((await sql.row<{ branches: string }>("SELECT branches FROM libraries WHERE id = $1", [id]))?.branches),
    // A library serves one branch: its record replaces any other.
    recordServedBranch: async (id, record) => {
      await sql.run("UPDATE libraries SET branches = $1 WHERE id = $2", [JSON.stringify([record]), id]);
    },
    setDescription: async (id, description) => {
      await sql.run("UPDATE libraries SET description = $1 WHERE id = $2", [description, id]);
    },
    setState: (id, state, reason) => setLibraryState(sql, id, state, reason ?? null),
    remove: (id) => removeLibrary(context, id),
  };
}

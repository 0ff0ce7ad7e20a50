import { LIBRARY_COLUMNS, parseBranches, toLibrary, type LibraryRow } from "../library-row.js";
import type Database from "better-sqlite3";
import { recordAudit } from "./audit.js";
import { enqueueJob, hasAnyPendingJob } from "./jobs.js";
import { getSetting, setSetting } from "./settings.js";
import { libraryBusy, libraryIdTaken } from "../record-values.js";
import type { BranchRecord, JobKind, JobPayload, Library, LibraryMove, LibraryOptions, LibraryState, NewLibrary } from "../records.js";

export function findLibrary(db: Database.Database, id: string): Library | undefined {
  const row = db.prepare(`SELECT ${LIBRARY_COLUMNS} FROM libraries WHERE id = ?`).get(id) as LibraryRow | undefined;
  return row && toLibrary(row);
}

/** Every library, by id. */
export function listLibraries(db: Database.Database): Library[] {
  return (db.prepare(`SELECT ${LIBRARY_COLUMNS} FROM libraries ORDER BY id`).all() as LibraryRow[]).map(toLibrary);
}

/** The libraries indexed from one source (a repository's host and path), whatever their ids. */
export function librariesBySource(db: Database.Database, sourceKey: string): Library[] {
  return (db.prepare(`SELECT ${LIBRARY_COLUMNS} FROM libraries WHERE source_key = ? ORDER BY id`).all(sourceKey) as LibraryRow[]).map(toLibrary);
}

/** Create a library, its source fixed from now on (only `moveLibrary` changes it); source_conflict if the id is taken. */
export function insertLibrary(db: Database.Database, lib: NewLibrary): void {
  try {
    db.prepare(
      `INSERT INTO libraries (id, team_id, title, description, source, source_url, source_key, private, owner_user_id, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued')`,
    ).run(lib.id, lib.teamId, lib.title, lib.description ?? "", lib.source, lib.sourceUrl, lib.sourceKey, lib.private ? 1 : 0, lib.ownerUserId);
  } catch (err) {
    if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") throw libraryIdTaken(lib.id);
    throw err;
  }
  // The id was free: options under it are a removed library's, left by LDS before 0.7.12 (remove now deletes them).
  db.prepare("DELETE FROM settings WHERE key = ?").run(optionsKey(lib.id));
}

const optionsKey = (id: string) => `library.options:${id}`;

export function libraryOptions(db: Database.Database, id: string): LibraryOptions {
  return JSON.parse(getSetting(db, optionsKey(id)) ?? "{}") as LibraryOptions;
}

export function setLibraryOptions(db: Database.Database, id: string, options: LibraryOptions): void {
  setSetting(db, optionsKey(id), JSON.stringify(options));
}

export function servedBranchRecords(db: Database.Database, libraryId: string): BranchRecord[] {
  return parseBranches(db.prepare("SELECT branches FROM libraries WHERE id = ?").pluck().get(libraryId) as string | undefined);
}

/** A library serves one branch: its record replaces any other (docs/api.md, "Branches"). */
export function recordServedBranch(db: Database.Database, libraryId: string, record: BranchRecord): void {
  db.prepare("UPDATE libraries SET branches = ? WHERE id = ?").run(JSON.stringify([record]), libraryId);
}

/** What the library's source says it is (a repository's README or context7.json), shown in search results. */
export function setLibraryDescription(db: Database.Database, libraryId: string, description: string): void {
  db.prepare("UPDATE libraries SET description = ? WHERE id = ?").run(description, libraryId);
}

/** Point a library at a new source; its served-branch record is cleared until the new source is fetched. */
export function setLibrarySource(db: Database.Database, libraryId: string, sourceUrl: string, sourceKey: string): void {
  db.prepare("UPDATE libraries SET source_url = ?, source_key = ?, branches = '[]' WHERE id = ?").run(sourceUrl, sourceKey, libraryId);
}

/** Move a library to a state of its ingestion; `reason` explains a failure. */
export function setLibraryState(db: Database.Database, libraryId: string, state: LibraryState, reason: string | null = null): void {
  db.prepare("UPDATE libraries SET state = ?, state_reason = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?").run(state, reason, libraryId);
}

/** A new library with the options it was submitted with and its first job, all or nothing. */
export function createLibraryWithJob(db: Database.Database, key: Buffer, library: NewLibrary, options: LibraryOptions | null, payload: JobPayload, token?: string): void {
  db.transaction(() => {
    insertLibrary(db, library);
    if (options) setLibraryOptions(db, library.id, options);
    enqueueJob(db, key, { libraryId: library.id, kind: "ingest", payload }, token);
  }).immediate();
}

/** Queue a job for an existing library; `markQueued` shows the library as queued (a refresh of what it serves). */
export function queueLibraryJob(db: Database.Database, key: Buffer, libraryId: string, job: { kind: JobKind; payload: JobPayload }, token: string | undefined, markQueued: boolean): void {
  db.transaction(() => {
    enqueueJob(db, key, { libraryId, ...job }, token);
    if (markQueued) setLibraryState(db, libraryId, "queued");
  }).immediate();
}

/**
 * Point a library at a new source (an operator's move): the source, the branch it serves, a refresh job, and the
 * audit record with who did it and where the library came from, all or nothing.
 */
export function relocateLibrary(db: Database.Database, key: Buffer, move: LibraryMove): void {
  db.transaction(() => {
    setLibrarySource(db, move.libraryId, move.sourceUrl, move.sourceKey);
    const options = { ...libraryOptions(db, move.libraryId), branch: move.branch };
    setLibraryOptions(db, move.libraryId, options);
    enqueueJob(db, key, { libraryId: move.libraryId, kind: "refresh", payload: { url: move.sourceUrl, ...options, teamId: move.teamId ?? undefined } });
    setLibraryState(db, move.libraryId, "queued");
    recordAudit(db, { actor: move.actor, action: "library.move", subject: move.libraryId, details: { from: move.from, to: move.sourceUrl, branch: move.branch ?? null } });
  }).immediate();
}

/**
 * Delete a library and everything of it (snippets and their full-text rows, versions, jobs and the git tokens they
 * waited with, usage counters, the options it was submitted with), all or nothing; library_busy while a job of it waits or runs. Answers the snippet ids, whose vectors the
 * caller removes next: vectors without snippets are invisible to readers, so that order is safe after a crash.
 */
export function removeLibrary(db: Database.Database, libraryId: string): number[] {
  return db
    .transaction(() => {
      // Checked inside the transaction: a job claimed meanwhile would write into a library that is gone.
      if (hasAnyPendingJob(db, libraryId)) throw libraryBusy(libraryId);
      const snippetIds = db.prepare("SELECT id FROM snippets WHERE library_id = ?").pluck().all(libraryId) as number[];
      const jobIds = db.prepare("SELECT id FROM jobs WHERE library_id = ?").pluck().all(libraryId) as number[];
      const dropToken = db.prepare("DELETE FROM secrets WHERE name = ?");
      for (const id of jobIds) dropToken.run(`job:${id}:gitToken`);
      db.prepare("DELETE FROM library_usage WHERE library_id = ?").run(libraryId);
      // Options are a setting, not a row of the library: a library created again under this id starts without them.
      db.prepare("DELETE FROM settings WHERE key = ?").run(optionsKey(libraryId));
      db.prepare("DELETE FROM libraries WHERE id = ?").run(libraryId);
      return snippetIds;
    })
    .immediate();
}

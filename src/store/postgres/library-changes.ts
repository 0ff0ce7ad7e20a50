import { LdsError } from "../../errors.js";
import { libraryBusy } from "../record-values.js";
import type { JobKind, JobPayload, LibraryMove, LibraryOptions, LibraryState, NewLibrary } from "../records.js";
import { notifyBatchChange } from "./batch-notices.js";
import { jobTokenName } from "./job-leases.js";
import { enqueueJob, hasAnyPendingJob } from "./jobs.js";
import { deleteSetting, getSetting, setSetting } from "./settings.js";
import { NOW_TEXT } from "./schema-text.js";
import { isUniqueViolation } from "./unique-violation.js";
import type { PgContext, Sql } from "./sql.js";
import { recordAudit } from "./usage-audit.js";

/** The library operations that write: those of several tables each one transaction, all or nothing. */

/** Create a library, its source fixed from now on; an id already taken is source_conflict, nothing changed. */
export async function insertLibrary(sql: Sql, lib: NewLibrary): Promise<void> {
  try {
    await sql.run(
      `INSERT INTO libraries (id, team_id, title, description, source, source_url, source_key, private, owner_user_id, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued')`,
      [lib.id, lib.teamId, lib.title, lib.description ?? "", lib.source, lib.sourceUrl, lib.sourceKey, lib.private ? 1 : 0, lib.ownerUserId],
    );
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new LdsError("source_conflict", `The library id ${lib.id} is already taken; ${lib.sourceKey} cannot replace it. Nothing was changed.`, {
        cause: err,
        hint: "A library's source is fixed when it is created; an operator can move it to another source.",
      });
    }
    throw err;
  }
  // The id was free: options under it are a removed library's, left by an LDS before 0.7.12 (as the SQLite engine).
  await deleteSetting(sql, optionsKey(lib.id));
}

export async function setLibraryState(sql: Sql, libraryId: string, state: LibraryState, reason: string | null = null): Promise<void> {
  await sql.run(`UPDATE libraries SET state = $1, state_reason = $2, updated_at = ${NOW_TEXT} WHERE id = $3`, [state, reason, libraryId]);
}

export const optionsKey = (libraryId: string) => `library.options:${libraryId}`;

export function createLibraryWithJob({ transaction, key }: PgContext, library: NewLibrary, options: LibraryOptions | null, payload: JobPayload, token?: string): Promise<void> {
  return transaction(async (tx) => {
    await insertLibrary(tx, library);
    if (options) await setSetting(tx, optionsKey(library.id), JSON.stringify(options));
    await enqueueJob(tx, key, { libraryId: library.id, kind: "ingest", payload }, token);
  });
}

export function queueLibraryJob({ transaction, key }: PgContext, libraryId: string, job: { kind: JobKind; payload: JobPayload }, token: string | undefined, markQueued: boolean): Promise<void> {
  return transaction(async (tx) => {
    await enqueueJob(tx, key, { libraryId, ...job }, token);
    if (markQueued) await setLibraryState(tx, libraryId, "queued");
  });
}

/** A library at a new source (an operator's move): source, served branch cleared, options, refresh job, audit record. */
export function relocateLibrary({ transaction, key }: PgContext, move: LibraryMove): Promise<void> {
  return transaction(async (tx) => {
    await tx.run("UPDATE libraries SET source_url = $1, source_key = $2, branches = '[]' WHERE id = $3", [move.sourceUrl, move.sourceKey, move.libraryId]);
    const options = { ...(JSON.parse((await getSetting(tx, optionsKey(move.libraryId))) ?? "{}") as LibraryOptions), branch: move.branch };
    await setSetting(tx, optionsKey(move.libraryId), JSON.stringify(options));
    await enqueueJob(tx, key, { libraryId: move.libraryId, kind: "refresh", payload: { url: move.sourceUrl, ...options, teamId: move.teamId ?? undefined } });
    await setLibraryState(tx, move.libraryId, "queued");
    await recordAudit(tx, { actor: move.actor, action: "library.move", subject: move.libraryId, details: { from: move.from, to: move.sourceUrl, branch: move.branch ?? null } });
  });
}

/**
 * Delete a library and everything of it (snippets, batches, versions and jobs by cascade; the jobs' git tokens, its
 * usage counters and its options), all or nothing; library_busy while a job of it waits or runs. Answers the snippet
 * ids, whose search entries the caller removes next.
 */
export function removeLibrary({ transaction }: PgContext, libraryId: string): Promise<number[]> {
  return transaction(async (tx) => {
    // The library's row is locked first: a job queued or claimed meanwhile waits for this transaction, then finds the
    // library gone (its foreign key), instead of writing into a library being deleted.
    await tx.run("SELECT 1 FROM libraries WHERE id = $1 FOR UPDATE", [libraryId]);
    if (await hasAnyPendingJob(tx, libraryId)) throw libraryBusy(libraryId);
    const snippetIds = (await tx.rows<{ id: number }>("SELECT id FROM snippets WHERE library_id = $1", [libraryId])).map((r) => r.id);
    const jobIds = (await tx.rows<{ id: number }>("SELECT id FROM jobs WHERE library_id = $1", [libraryId])).map((r) => r.id);
    if (jobIds.length) await tx.run("DELETE FROM secrets WHERE name = ANY($1::text[])", [jobIds.map(jobTokenName)]);
    await tx.run("DELETE FROM library_usage WHERE library_id = $1", [libraryId]);
    await deleteSetting(tx, optionsKey(libraryId));
    await tx.run("DELETE FROM libraries WHERE id = $1", [libraryId]);
    // Its live batches went with it: replicas drop them from their search files.
    await notifyBatchChange(tx, { library: libraryId, event: "removed" });
    return snippetIds;
  });
}

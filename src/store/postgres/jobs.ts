import type { GitJobPayload, Job, JobPayload } from "../records.js";
import type { JobStore } from "../store.js";
import { NOW_TEXT } from "./schema-text.js";
import { deleteSecret, getSecret, putSecret } from "./settings.js";
import type { PgContext, Sql } from "./sql.js";

/** Where a job's git token waits sealed (as in lds.db), removed with the job. */
export const jobTokenName = (jobId: number) => `job:${jobId}:gitToken`;

/** Queue a job (inside the caller's transaction when it has one); a git token waits sealed in secrets. */
export async function enqueueJob(tx: Sql, key: Buffer, job: Omit<Job, "id">, token?: string): Promise<number> {
  const row = await tx.row<{ id: number }>("INSERT INTO jobs (library_id, kind, payload) VALUES ($1, $2, $3) RETURNING id", [job.libraryId, job.kind, JSON.stringify(job.payload)]);
  if (token) await putSecret(tx, key, jobTokenName(row!.id), token);
  return row!.id;
}

export async function hasAnyPendingJob(sql: Sql, libraryId: string): Promise<boolean> {
  return (await sql.row("SELECT 1 FROM jobs WHERE library_id = $1 AND state IN ('queued','running') LIMIT 1", [libraryId])) !== undefined;
}

export function jobStore({ sql, transaction, key }: PgContext): JobStore {
  return {
    enqueue: (job, token) => transaction((tx) => enqueueJob(tx, key, job, token)),
    // One statement: the oldest queued row is locked as it is selected, and a row another claim holds is skipped,
    // not waited for and then taken again (UPDATE … WHERE id = (SELECT … LIMIT 1) double-claims under READ COMMITTED).
    claimNext: async () => {
      const row = await sql.row<{ id: number; libraryId: string; kind: Job["kind"]; payload: string }>(
        `UPDATE jobs SET state = 'running', updated_at = ${NOW_TEXT}
         WHERE id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING id, library_id AS "libraryId", kind, payload`,
      );
      return row ? { ...row, payload: JSON.parse(row.payload) as JobPayload } : undefined;
    },
    hasQueued: async () => (await sql.row("SELECT 1 FROM jobs WHERE state = 'queued' LIMIT 1")) !== undefined,
    // The version is in the payload (JSON text, as lds.db keeps it): read as the SQLite engine reads it.
    hasPending: async (libraryId, version = "") => {
      const rows = await sql.rows<{ payload: string }>("SELECT payload FROM jobs WHERE library_id = $1 AND state IN ('queued','running')", [libraryId]);
      return rows.some((r) => ((JSON.parse(r.payload) as GitJobPayload).version ?? "") === version);
    },
    hasAnyPending: (libraryId) => hasAnyPendingJob(sql, libraryId),
    token: (jobId) => getSecret(sql, key, jobTokenName(jobId)),
    finish: (jobId, error) =>
      transaction(async (tx) => {
        await tx.run(`UPDATE jobs SET state = $1, error = $2, updated_at = ${NOW_TEXT} WHERE id = $3`, [error ? "failed" : "done", error, jobId]);
        await deleteSecret(tx, jobTokenName(jobId));
      }),
    requeueRunningAsSoleProcess: () => sql.run("UPDATE jobs SET state = 'queued' WHERE state = 'running'"),
  };
}

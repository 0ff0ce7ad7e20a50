import type { GitJobPayload, Job } from "../records.js";
import type { JobStore } from "../store.js";
import { claimNextJob, finishJob, giveBackJob, jobTokenName, renewJobLease } from "./job-leases.js";
import { getSecret, putSecret } from "./settings.js";
import type { PgContext, Sql } from "./sql.js";

/** Queue a job (inside the caller's transaction when it has one); a git token waits sealed in secrets. */
export async function enqueueJob(tx: Sql, key: Buffer, job: Omit<Job, "id">, token?: string): Promise<number> {
  const row = await tx.row<{ id: number }>("INSERT INTO jobs (library_id, kind, payload) VALUES ($1, $2, $3) RETURNING id", [job.libraryId, job.kind, JSON.stringify(job.payload)]);
  if (token) await putSecret(tx, key, jobTokenName(row!.id), token);
  return row!.id;
}

export async function hasAnyPendingJob(sql: Sql, libraryId: string): Promise<boolean> {
  return (await sql.row("SELECT 1 FROM jobs WHERE library_id = $1 AND state IN ('queued','running') LIMIT 1", [libraryId])) !== undefined;
}

export function jobStore(context: PgContext): JobStore {
  const { sql, transaction, key } = context;
  return {
    enqueue: (job, token) => transaction((tx) => enqueueJob(tx, key, job, token)),
    claimNext: (owner, leaseMs) => claimNextJob(context, owner, leaseMs),
    renewLease: (jobId, owner, leaseMs) => renewJobLease(sql, jobId, owner, leaseMs),
    giveBack: (jobId, owner) => giveBackJob(sql, jobId, owner),
    hasQueued: async () => (await sql.row("SELECT 1 FROM jobs WHERE state = 'queued' LIMIT 1")) !== undefined,
    // The version is in the payload (JSON text, as lds.db keeps it): read as the SQLite engine reads it.
    hasPending: async (libraryId, version = "") => {
      const rows = await sql.rows<{ payload: string }>("SELECT payload FROM jobs WHERE library_id = $1 AND state IN ('queued','running')", [libraryId]);
      return rows.some((r) => ((JSON.parse(r.payload) as GitJobPayload).version ?? "") === version);
    },
    hasAnyPending: (libraryId) => hasAnyPendingJob(sql, libraryId),
    token: (jobId) => getSecret(sql, key, jobTokenName(jobId)),
    finish: (jobId, owner, error) => finishJob(context, jobId, owner, error),
    requeueRunningAsSoleProcess: () => sql.run("UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL WHERE state = 'running'"),
  };
}

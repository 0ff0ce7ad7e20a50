import type Database from "better-sqlite3";
import { deleteSecret, getSecret, putSecret } from "./secrets-table.js";
import type { ClaimedJob, GitJobPayload, Job, JobLease, JobPayload } from "../records.js";
import { ABANDONED_JOB_REASON, MAX_JOB_ATTEMPTS } from "../record-values.js";

const tokenName = (jobId: number) => `job:${jobId}:gitToken`;

/** Queue a job. A git token waits sealed in the secrets table (jobs survive restarts) and is removed with the job. */
export function enqueueJob(db: Database.Database, key: Buffer, job: Omit<Job, "id">, token?: string): number {
  return db
    .transaction(() => {
      const id = Number(db.prepare("INSERT INTO jobs (library_id, kind, payload) VALUES (?, ?, ?)").run(job.libraryId, job.kind, JSON.stringify(job.payload)).lastInsertRowid);
      if (token) putSecret(db, key, tokenName(id), token);
      return id;
    })
    .immediate();
}

const NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";
/** lds.db's timestamp text `?` milliseconds from now (bound as a number). */
const NOW_PLUS_MS = "strftime('%Y-%m-%dT%H:%M:%fZ','now', '+' || (? / 1000.0) || ' seconds')";
/** A job's library version as the payload names it ("" = the current content), for `jobs j`. */
const VERSION_OF = (alias: string) => `coalesce(json_extract(${alias}.payload, '$.version'), '')`;
/** A running job whose lease has passed, or that never had one (it ran before schema 14): nobody renews it. */
const EXPIRED = `(j.lease_until IS NULL OR j.lease_until < ${NOW})`;

/**
 * Take the oldest claimable job for `owner` (store.ts says which), in one write transaction: lds.db has one writer
 * at a time, so the check that no other job of the version runs under a live lease and the claim cannot interleave
 * with another claim.
 */
export function claimNextJob(db: Database.Database, owner: string, leaseMs: number): ClaimedJob | undefined {
  const next = db.prepare(
    `SELECT id, library_id AS libraryId, state, attempts, ${VERSION_OF("j")} AS version FROM jobs j
     WHERE (j.state = 'queued' OR (j.state = 'running' AND ${EXPIRED}))
       AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state = 'running' AND r.id <> j.id AND r.library_id = j.library_id
                       AND r.lease_until >= ${NOW} AND ${VERSION_OF("r")} = ${VERSION_OF("j")})
     ORDER BY j.id LIMIT 1`,
  );
  const claim = db.prepare(
    `UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ${NOW_PLUS_MS}, attempts = attempts + 1, updated_at = ${NOW}
     WHERE id = ? RETURNING id, library_id AS libraryId, kind, payload, lease_owner AS leaseOwner, lease_until AS leaseUntil, attempts`,
  );
  return db
    .transaction(() => {
      for (;;) {
        const found = next.get() as { id: number; libraryId: string; state: string; attempts: number; version: string } | undefined;
        if (!found) return undefined;
        if (found.state === "running" && found.attempts >= MAX_JOB_ATTEMPTS) {
          failAbandonedJob(db, found);
          continue;
        }
        const row = claim.get(owner, leaseMs, found.id) as Omit<ClaimedJob, "payload"> & { payload: string };
        return { ...row, payload: JSON.parse(row.payload) as JobPayload };
      }
    })
    .immediate();
}

/** A reclaimed job out of attempts: failed, with its library when the job was its current content's and it is not finalized. */
function failAbandonedJob(db: Database.Database, job: { id: number; libraryId: string; version: string }): void {
  db.prepare(`UPDATE jobs SET state = 'failed', error = ?, lease_owner = NULL, lease_until = NULL, updated_at = ${NOW} WHERE id = ?`).run(ABANDONED_JOB_REASON, job.id);
  deleteSecret(db, tokenName(job.id));
  if (job.version === "") {
    db.prepare(`UPDATE libraries SET state = 'failed', state_reason = ?, updated_at = ${NOW} WHERE id = ? AND state IN ('queued','fetching','parsing','embedding')`).run(ABANDONED_JOB_REASON, job.libraryId);
  }
}

/** Extend the owner's lease; false when the job no longer runs under it (another runner took it, or it is over). */
export function renewJobLease(db: Database.Database, jobId: number, owner: string, leaseMs: number): boolean {
  return db.prepare(`UPDATE jobs SET lease_until = ${NOW_PLUS_MS} WHERE id = ? AND state = 'running' AND lease_owner = ?`).run(leaseMs, jobId, owner).changes === 1;
}

/**
 * Queue the job again as its holder stops cleanly, taking back the attempt its claim counted (claims are the only
 * writers of attempts, each one more); false, changing nothing, when `owner` no longer holds it.
 */
export function giveBackJob(db: Database.Database, jobId: number, owner: string): boolean {
  return (
    db
      .prepare(`UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL, attempts = max(attempts - 1, 0), updated_at = ${NOW} WHERE id = ? AND state = 'running' AND lease_owner = ?`)
      .run(jobId, owner).changes === 1
  );
}

/** Whether any job waits to run. */
export function hasQueuedJobs(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM jobs WHERE state = 'queued' LIMIT 1").get() !== undefined;
}

/** Whether a job for this library (and version: "" = the current content) waits or runs. */
export function hasPendingJob(db: Database.Database, libraryId: string, version = ""): boolean {
  const payloads = db.prepare("SELECT payload FROM jobs WHERE library_id = ? AND state IN ('queued','running')").pluck().all(libraryId) as string[];
  return payloads.some((p) => ((JSON.parse(p) as GitJobPayload).version ?? "") === version);
}

export function hasAnyPendingJob(db: Database.Database, libraryId: string): boolean {
  return db.prepare("SELECT 1 FROM jobs WHERE library_id = ? AND state IN ('queued','running') LIMIT 1").get(libraryId) !== undefined;
}

export function jobToken(db: Database.Database, key: Buffer, jobId: number): string | undefined {
  return getSecret(db, key, tokenName(jobId));
}

/** Finish the job as its holder: nothing changes (false) when it no longer runs under `owner`'s lease. */
export function finishJob(db: Database.Database, jobId: number, owner: string, error: string | null): boolean {
  return db
    .transaction(() => {
      const finished = db
        .prepare(`UPDATE jobs SET state = ?, error = ?, lease_until = NULL, updated_at = ${NOW} WHERE id = ? AND state = 'running' AND lease_owner = ?`)
        .run(error ? "failed" : "done", error, jobId, owner).changes;
      if (finished === 0) return false;
      deleteSecret(db, tokenName(jobId));
      return true;
    })
    .immediate();
}

/**
 * Whether this lease still holds: the job runs under `owner` and its lease has not passed. Inside the caller's
 * write transaction (publishing a batch), so that no claim can take the job over in between.
 */
export function holdsLease(db: Database.Database, lease: JobLease): boolean {
  return db.prepare(`SELECT 1 FROM jobs WHERE id = ? AND state = 'running' AND lease_owner = ? AND lease_until >= ${NOW}`).get(lease.jobId, lease.owner) !== undefined;
}

/**
 * At start: a job that was running when the process died is run again. Only when no other process can be running
 * one: a shared database (issue 34) uses leases instead.
 */
export function requeueRunningJobsAsSoleProcess(db: Database.Database): number {
  return db.prepare("UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL WHERE state = 'running'").run().changes;
}

/**
 * In a restored database copy, before it goes live: jobs that were running at snapshot time never finished, and the
 * libraries being indexed then (`partial`) are queued again. Returns the libraries queued. Older schemas without
 * jobs have nothing to queue.
 */
export function requeueAfterRestore(db: Database.Database, partial: string[]): string[] {
  const hasJobs = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs'").get();
  if (!hasJobs || partial.length === 0) return [];
  const markLibrary = db.prepare(
    `UPDATE libraries SET state = 'queued', state_reason = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')
     WHERE id = ?`,
  );
  const hasQueuedJob = db.prepare("SELECT 1 FROM jobs WHERE library_id = ? AND state = 'queued'");
  const queueJob = db.prepare(`INSERT INTO jobs (library_id, kind, state, payload) VALUES (?, 'refresh', 'queued', '{"reason":"restore"}')`);
  const requeued: string[] = [];
  db.transaction(() => {
    // A job that was running when the snapshot was taken never finished: run it again.
    db.prepare("UPDATE jobs SET state = 'queued' WHERE state = 'running'").run();
    for (const id of partial) {
      if (markLibrary.run("Being indexed when the backup was taken; re-indexing after restore.", id).changes === 0) continue;
      if (!hasQueuedJob.get(id)) queueJob.run(id);
      requeued.push(id);
    }
  }).immediate();
  return requeued;
}

import type Database from "better-sqlite3";
import { deleteSecret, getSecret, putSecret } from "./secrets-table.js";
import type { GitJobPayload, Job, JobPayload } from "../records.js";

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

/** Take the oldest queued job, atomically, so that two runners never take the same one. */
export function claimNextJob(db: Database.Database): Job | undefined {
  const row = db
    .prepare(
      `UPDATE jobs SET state = 'running', updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')
       WHERE id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY id LIMIT 1)
       RETURNING id, library_id AS libraryId, kind, payload`,
    )
    .get() as { id: number; libraryId: string; kind: Job["kind"]; payload: string } | undefined;
  return row ? { ...row, payload: JSON.parse(row.payload) as JobPayload } : undefined;
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

export function finishJob(db: Database.Database, jobId: number, error: string | null): void {
  db.transaction(() => {
    db.prepare("UPDATE jobs SET state = ?, error = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?").run(error ? "failed" : "done", error, jobId);
    deleteSecret(db, tokenName(jobId));
  }).immediate();
}

/**
 * At start: a job that was running when the process died is run again. Only when no other process can be running
 * one: a shared database (issue 34) uses leases instead.
 */
export function requeueRunningJobsAsSoleProcess(db: Database.Database): number {
  return db.prepare("UPDATE jobs SET state = 'queued' WHERE state = 'running'").run().changes;
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

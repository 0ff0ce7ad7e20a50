import type { ClaimedJob, JobLease, JobPayload } from "../records.js";
import { ABANDONED_JOB_REASON, MAX_JOB_ATTEMPTS } from "../record-values.js";
import { NOW_TEXT, nowPlusMsText } from "./schema-text.js";
import { deleteSecret } from "./settings.js";
import type { PgContext, Sql } from "./sql.js";

/** Where a job's git token waits sealed (as in lds.db), removed with the job. */
export const jobTokenName = (jobId: number) => `job:${jobId}:gitToken`;

/** A job's library version as its payload (JSON text, as lds.db keeps it) names it: "" = the current content. */
const versionOf = (alias: string) => `coalesce(${alias}.payload::json->>'version', '')`;

/** Another running job of j's library version whose lease is live. */
const LIVE_SIBLING = `EXISTS (SELECT 1 FROM jobs r WHERE r.state = 'running' AND r.id <> j.id AND r.library_id = j.library_id
  AND r.lease_until >= ${NOW_TEXT} AND ${versionOf("r")} = ${versionOf("j")})`;

/**
 * Claims of one library version are decided one at a time under this transaction-level advisory lock (two keys: this
 * class and a hash of the library id and version; a hash shared by two versions only makes one wait a poll).
 */
const CLAIM_LOCK = 0x4c445304;

/**
 * Take the oldest claimable job for `owner` (store.ts says which). The candidate is selected `FOR UPDATE SKIP
 * LOCKED`, so replicas claiming at once take different rows. That alone does not keep one running job per library
 * version: two replicas can lock two queued jobs of one version at the same moment, each statement's snapshot
 * showing no running job of it, and a check inside that one statement would read the snapshot taken before any
 * lock it took. So the claim is a short transaction: the candidate row, then the version's advisory lock (tried,
 * not waited for: a replica holding it is claiming that version now, so the candidate is passed over), then the
 * check for a live running job of the version as a statement of its own, whose READ COMMITTED snapshot is taken
 * after the lock and so sees every claim of that version committed before it, then the claim. (A partial unique
 * index on running jobs would also refuse a second one, but as an error after waiting on the other transaction,
 * and it would hold a version's slot for an expired job that a queued one should be able to take.)
 */
export function claimNextJob({ transaction }: PgContext, owner: string, leaseMs: number): Promise<ClaimedJob | undefined> {
  return transaction(async (tx) => {
    const passed: number[] = [];
    for (;;) {
      const found = await tx.row<{ id: number; libraryId: string; state: string; attempts: number; version: string }>(
        `SELECT j.id, j.library_id AS "libraryId", j.state, j.attempts, ${versionOf("j")} AS version FROM jobs j
         WHERE (j.state = 'queued' OR (j.state = 'running' AND (j.lease_until IS NULL OR j.lease_until < ${NOW_TEXT})))
           AND j.id <> ALL($1::bigint[]) AND NOT ${LIVE_SIBLING}
         ORDER BY j.id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [passed],
      );
      if (!found) return undefined;
      const locked = await tx.row<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked", [CLAIM_LOCK, `${found.libraryId}\n${found.version}`]);
      if (!locked!.locked || (await tx.row(`SELECT 1 FROM jobs j WHERE j.id = $1 AND ${LIVE_SIBLING}`, [found.id]))) {
        passed.push(found.id);
        continue;
      }
      if (found.state === "running" && found.attempts >= MAX_JOB_ATTEMPTS) {
        await failAbandonedJob(tx, found);
        continue;
      }
      const row = await tx.row<Omit<ClaimedJob, "payload"> & { payload: string }>(
        `UPDATE jobs SET state = 'running', lease_owner = $1, lease_until = ${nowPlusMsText("$2::integer")}, attempts = attempts + 1, updated_at = ${NOW_TEXT}
         WHERE id = $3 RETURNING id, library_id AS "libraryId", kind, payload, lease_owner AS "leaseOwner", lease_until AS "leaseUntil", attempts`,
        [owner, Math.round(leaseMs), found.id],
      );
      return { ...row!, payload: JSON.parse(row!.payload) as JobPayload };
    }
  });
}

/** A reclaimed job out of attempts: failed, with its library when the job was its current content's and it is not finalized. */
async function failAbandonedJob(tx: Sql, job: { id: number; libraryId: string; version: string }): Promise<void> {
  await tx.run(`UPDATE jobs SET state = 'failed', error = $1, lease_owner = NULL, lease_until = NULL, updated_at = ${NOW_TEXT} WHERE id = $2`, [ABANDONED_JOB_REASON, job.id]);
  await deleteSecret(tx, jobTokenName(job.id));
  if (job.version === "") {
    await tx.run(`UPDATE libraries SET state = 'failed', state_reason = $1, updated_at = ${NOW_TEXT} WHERE id = $2 AND state IN ('queued','fetching','parsing','embedding')`, [
      ABANDONED_JOB_REASON,
      job.libraryId,
    ]);
  }
}

/** Extend the owner's lease; false when the job no longer runs under it (another runner took it, or it is over). */
export async function renewJobLease(sql: Sql, jobId: number, owner: string, leaseMs: number): Promise<boolean> {
  const changed = await sql.run(`UPDATE jobs SET lease_until = ${nowPlusMsText("$1::integer")} WHERE id = $2 AND state = 'running' AND lease_owner = $3`, [Math.round(leaseMs), jobId, owner]);
  return changed === 1;
}

/**
 * Queue the job again as its holder stops cleanly, taking back the attempt its claim counted (claims are the only
 * writers of attempts, each one more); false, changing nothing, when `owner` no longer holds it.
 */
export async function giveBackJob(sql: Sql, jobId: number, owner: string): Promise<boolean> {
  const changed = await sql.run(
    `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0), updated_at = ${NOW_TEXT} WHERE id = $1 AND state = 'running' AND lease_owner = $2`,
    [jobId, owner],
  );
  return changed === 1;
}

/** Finish the job as its holder: nothing changes (false) when it no longer runs under `owner`'s lease. */
export function finishJob({ transaction }: PgContext, jobId: number, owner: string, error: string | null): Promise<boolean> {
  return transaction(async (tx) => {
    const finished = await tx.run(`UPDATE jobs SET state = $1, error = $2, lease_until = NULL, updated_at = ${NOW_TEXT} WHERE id = $3 AND state = 'running' AND lease_owner = $4`, [
      error ? "failed" : "done",
      error,
      jobId,
      owner,
    ]);
    if (finished === 0) return false;
    await deleteSecret(tx, jobTokenName(jobId));
    return true;
  });
}

/**
 * Whether this lease still holds (the job runs under `owner`, its lease not passed), inside the caller's transaction
 * (publishing a batch): the row is locked FOR SHARE until it ends, so a claim (FOR UPDATE SKIP LOCKED) passes the
 * job over meanwhile instead of taking it over in between.
 */
export async function holdsLease(tx: Sql, lease: JobLease): Promise<boolean> {
  return (await tx.row(`SELECT 1 FROM jobs WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND lease_until >= ${NOW_TEXT} FOR SHARE`, [lease.jobId, lease.owner])) !== undefined;
}

/**
 * Held shared (two keys: this class and `hashtext` of the library id and version, a newline between) by a command
 * that ingests without a job (lds ingest git), on its session, from before it opens a batch of that version until it
 * exits: its batch is not abandoned while it runs. A hash shared by two versions only keeps an abandoned batch a while.
 */
export const INGESTING_LOCK = 0x4c445306;

/**
 * The unfinished batches of library versions no running job holds a live lease on, nor a command ingests now
 * (INGESTING_LOCK held): their ingestion is gone.
 */
export function retireAbandonedBatches(sql: Sql): Promise<number> {
  return sql.run(
    `UPDATE snippet_batches b SET state = 'retired' WHERE b.state = 'writing' AND NOT EXISTS (
       SELECT 1 FROM jobs j WHERE j.state = 'running' AND j.library_id = b.library_id AND ${versionOf("j")} = b.version AND j.lease_until >= ${NOW_TEXT})
     AND NOT EXISTS (
       SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND l.classid = ${INGESTING_LOCK} AND l.objid = hashtext(b.library_id || E'\\n' || b.version)::oid AND l.objsubid = 2)`,
  );
}

import type { Logger } from "pino";
import { describeFailure, LdsError } from "../errors.js";
import type { JobLease } from "../store/records.js";
import type { JobStore } from "../store/store.js";

/**
 * Whether an ingestion stopped because its runner lost the job's lease (another runner took the job over): its
 * publication was refused, or its signal was aborted for that. Such an ingestion records nothing on the library:
 * the runner now holding the job does.
 */
export function leaseWasLost(err: unknown, signal: AbortSignal | undefined): boolean {
  const isLost = (e: unknown) => e instanceof LdsError && e.code === "lease_lost";
  return isLost(err) || (signal?.aborted === true && isLost(signal.reason));
}

/**
 * Whether a job stopped because the records could not be reached (a database restart): not the job's failure, and
 * nothing can be recorded meanwhile anyway. The job is left under its lease, which passes without heartbeats, and a
 * runner (this one or another replica) claims it again once the database answers.
 */
export function recordsUnreachable(err: unknown): boolean {
  return err instanceof LdsError && err.code === "database_unreachable";
}

export interface LeaseKeeper {
  /** Aborted (its reason a lease_lost LdsError) once the lease is no longer this runner's. */
  readonly signal: AbortSignal;
  /** No more heartbeats: before the job is finished, so that a renewal crossing the finish is not taken for a loss. */
  stop(): void;
}

/**
 * Renew a claimed job's lease every `heartbeatMs` until stopped. A renewal answered false means another runner took
 * the job over: the signal aborts at once. A renewal that fails (the database cannot be reached) is tried again at
 * the next beat, and the signal aborts once the lease has passed by this process's clock, counted from the last
 * renewal asked for that succeeded (or from before the claim), so that this runner never goes on past a lease
 * another may already have taken over.
 */
export function keepLease(jobs: JobStore, lease: JobLease, timing: { leaseMs: number; heartbeatMs: number; heldSince: number }, log: Logger): LeaseKeeper {
  const controller = new AbortController();
  let validUntil = timing.heldSince + timing.leaseMs;
  let renewing = false;
  let stopped = false;
  const lose = (why: string) => {
    // A renewal still under way when the job finished answers false: that is the finish, not a takeover.
    if (stopped || controller.signal.aborted) return;
    clearInterval(timer);
    log.warn({ owner: lease.owner }, `job lease lost: ${why}; its work stops here and the runner holding it finishes it`);
    controller.abort(new LdsError("lease_lost", `Job ${lease.jobId} is no longer this runner's: ${why}.`, { hint: "Nothing to do: the runner holding the job now finishes it." }));
  };
  const beat = async () => {
    if (renewing) {
      // The last renewal still waits on the database: past the lease, this runner no longer holds the job.
      if (Date.now() > validUntil) lose("its lease passed while the database did not answer");
      return;
    }
    renewing = true;
    const asked = Date.now();
    try {
      if (await jobs.renewLease(lease.jobId, lease.owner, timing.leaseMs)) validUntil = asked + timing.leaseMs;
      else lose("another runner took the job over after its lease expired");
    } catch (err) {
      if (Date.now() > validUntil) lose("its lease passed while the database could not be reached");
      else log.warn({ err: describeFailure(err) }, "could not renew the job's lease; trying again at the next heartbeat");
    } finally {
      renewing = false;
    }
  };
  const timer = setInterval(() => void beat(), timing.heartbeatMs);
  timer.unref();
  return {
    signal: controller.signal,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** A runner's owner id: its host, its process and a random part (two runners of one process differ). */
export function runnerOwnerId(host: string, pid: number, random: string): string {
  return `${host}:${pid}:${random}`;
}

import { ABANDONED_JOB_REASON, MAX_JOB_ATTEMPTS } from "../../../src/store/record-values.js";
import type { Job, JobLease } from "../../../src/store/records.js";
import type { JobStore } from "../../../src/store/store.js";
import { deleteSecret, getSecret, putSecret } from "./secrets.js";
import { copy, nextId, type MemoryTables } from "./tables.js";

export const tokenName = (jobId: number) => `job:${jobId}:gitToken`;

/** Queue a job; a git token waits sealed and goes with the job. */
export function enqueue(tables: MemoryTables, job: Omit<Job, "id">, token?: string): number {
  const id = nextId(tables, "jobs");
  tables.jobs.set(id, { job: { id, ...copy(job) }, state: "queued", error: null, leaseOwner: null, leaseUntil: null, attempts: 0 });
  if (token) putSecret(tables, tokenName(id), token);
  return id;
}

const pending = (state: string) => state === "queued" || state === "running";

type JobRow = MemoryTables["jobs"] extends Map<number, infer R> ? R : never;

/** A job's library version: its payload's, "" = the current content. */
export const versionOf = (job: Job) => ("version" in job.payload ? (job.payload.version ?? "") : "");

/** Whether this lease holds now: the job runs under its owner and the lease has not passed. */
export function holdsLease(tables: MemoryTables, lease: JobLease): boolean {
  const j = tables.jobs.get(lease.jobId);
  return j?.state === "running" && j.leaseOwner === lease.owner && j.leaseUntil !== null && j.leaseUntil >= Date.now();
}

/** Whether a running job of this library version holds a live lease. */
export function versionHeld(tables: MemoryTables, libraryId: string, version: string): boolean {
  const now = Date.now();
  return [...tables.jobs.values()].some((j) => j.state === "running" && j.job.libraryId === libraryId && versionOf(j.job) === version && j.leaseUntil !== null && j.leaseUntil >= now);
}

export function hasAnyPending(tables: MemoryTables, libraryId: string): boolean {
  return [...tables.jobs.values()].some((j) => j.job.libraryId === libraryId && pending(j.state));
}

export function jobStore(tables: MemoryTables): JobStore {
  return {
    enqueue: async (job, token) => enqueue(tables, job, token),
    claimNext: async (owner, leaseMs) => {
      const now = Date.now();
      const live = (j: JobRow) => j.state === "running" && j.leaseUntil !== null && j.leaseUntil >= now;
      const versionKey = (j: JobRow) => `${j.job.libraryId}\n${versionOf(j.job)}`;
      // Map order is insertion order, so the first claimable one is the oldest.
      for (const j of tables.jobs.values()) {
        const claimable = j.state === "queued" || (j.state === "running" && !live(j));
        if (!claimable || [...tables.jobs.values()].some((r) => r !== j && live(r) && versionKey(r) === versionKey(j))) continue;
        if (j.state === "running" && j.attempts >= MAX_JOB_ATTEMPTS) {
          Object.assign(j, { state: "failed", error: ABANDONED_JOB_REASON, leaseOwner: null, leaseUntil: null });
          deleteSecret(tables, tokenName(j.job.id));
          const library = tables.libraries.get(j.job.libraryId);
          if (versionOf(j.job) === "" && library && ["queued", "fetching", "parsing", "embedding"].includes(library.state)) Object.assign(library, { state: "failed", stateReason: ABANDONED_JOB_REASON });
          continue;
        }
        Object.assign(j, { state: "running", leaseOwner: owner, leaseUntil: now + leaseMs, attempts: j.attempts + 1 });
        return { ...copy(j.job), leaseOwner: owner, leaseUntil: new Date(now + leaseMs).toISOString(), attempts: j.attempts };
      }
      return undefined;
    },
    renewLease: async (jobId, owner, leaseMs) => {
      const j = tables.jobs.get(jobId);
      if (j?.state !== "running" || j.leaseOwner !== owner) return false;
      j.leaseUntil = Date.now() + leaseMs;
      return true;
    },
    giveBack: async (jobId, owner) => {
      const j = tables.jobs.get(jobId);
      if (j?.state !== "running" || j.leaseOwner !== owner) return false;
      Object.assign(j, { state: "queued", leaseOwner: null, leaseUntil: null, attempts: Math.max(j.attempts - 1, 0) });
      return true;
    },
    hasQueued: async () => [...tables.jobs.values()].some((j) => j.state === "queued"),
    hasPending: async (libraryId, version = "") => [...tables.jobs.values()].some((j) => j.job.libraryId === libraryId && pending(j.state) && versionOf(j.job) === version),
    hasAnyPending: async (libraryId) => hasAnyPending(tables, libraryId),
    token: async (jobId) => getSecret(tables, tokenName(jobId)),
    finish: async (jobId, owner, error) => {
      const j = tables.jobs.get(jobId);
      if (j?.state !== "running" || j.leaseOwner !== owner) return false;
      Object.assign(j, { state: error ? "failed" : "done", error, leaseUntil: null });
      deleteSecret(tables, tokenName(jobId));
      return true;
    },
    requeueRunningAsSoleProcess: async () => {
      let requeued = 0;
      for (const j of tables.jobs.values()) if (j.state === "running" && ++requeued) Object.assign(j, { state: "queued", leaseOwner: null, leaseUntil: null });
      return requeued;
    },
  };
}

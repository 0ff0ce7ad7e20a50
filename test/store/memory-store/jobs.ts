import type { Job } from "../../../src/store/records.js";
import type { JobStore } from "../../../src/store/store.js";
import { deleteSecret, getSecret, putSecret } from "./secrets.js";
import { copy, nextId, type MemoryTables } from "./tables.js";

export const tokenName = (jobId: number) => `job:${jobId}:gitToken`;

/** Queue a job; a git token waits sealed and goes with the job. */
export function enqueue(tables: MemoryTables, job: Omit<Job, "id">, token?: string): number {
  const id = nextId(tables, "jobs");
  tables.jobs.set(id, { job: { id, ...copy(job) }, state: "queued", error: null });
  if (token) putSecret(tables, tokenName(id), token);
  return id;
}

const pending = (state: string) => state === "queued" || state === "running";

export function hasAnyPending(tables: MemoryTables, libraryId: string): boolean {
  return [...tables.jobs.values()].some((j) => j.job.libraryId === libraryId && pending(j.state));
}

export function jobStore(tables: MemoryTables): JobStore {
  return {
    enqueue: async (job, token) => enqueue(tables, job, token),
    claimNext: async () => {
      // Map order is insertion order, so the first queued one is the oldest.
      const next = [...tables.jobs.values()].find((j) => j.state === "queued");
      if (!next) return undefined;
      next.state = "running";
      return copy(next.job);
    },
    hasQueued: async () => [...tables.jobs.values()].some((j) => j.state === "queued"),
    hasPending: async (libraryId, version = "") =>
      [...tables.jobs.values()].some((j) => j.job.libraryId === libraryId && pending(j.state) && ("version" in j.job.payload ? (j.job.payload.version ?? "") : "") === version),
    hasAnyPending: async (libraryId) => hasAnyPending(tables, libraryId),
    token: async (jobId) => getSecret(tables, tokenName(jobId)),
    finish: async (jobId, error) => {
      const j = tables.jobs.get(jobId);
      if (j) Object.assign(j, { state: error ? "failed" : "done", error });
      deleteSecret(tables, tokenName(jobId));
    },
    requeueRunningAsSoleProcess: async () => {
      let requeued = 0;
      for (const j of tables.jobs.values()) if (j.state === "running" && ++requeued) j.state = "queued";
      return requeued;
    },
  };
}

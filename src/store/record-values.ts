/**
 * Values computed from records, the same whichever engine serves them: kept apart from the contract (store.ts holds
 * interfaces only) so that the engine's modules can use them without importing the contract they implement.
 */
import { LdsError } from "../errors.js";
import type { Library } from "./records.js";

/** The branch a library serves, as last fetched; undefined before its first ingestion. */
export function servedBranch(library: Pick<Library, "branches">): string | undefined {
  return library.branches[0]?.name;
}

/**
 * A library id already in use: creating another library under it changes nothing. The use cases look before they
 * create (and name the library's source: ops/submit-repository.ts); this answers the race they cannot see.
 */
export function libraryIdTaken(libraryId: string): LdsError {
  return new LdsError("source_conflict", `A library ${libraryId} already exists; nothing was created.`, { hint: "Submit again: the existing library is then refreshed or named." });
}

/** A library one of whose jobs waits or runs cannot be removed: the job would write into a library that is gone. */
export function libraryBusy(libraryId: string): LdsError {
  return new LdsError("library_busy", `${libraryId} is being processed; it can be removed when its job has finished.`, {
    hint: "Wait until its state is finalized or failed, then remove it again.",
  });
}

/** A wiki site as connections record it: no trailing slash, lower case. */
export function normaliseSiteUrl(siteUrl: string): string {
  return siteUrl.replace(/\/+$/, "").toLowerCase();
}

/**
 * Claims of one job at most: a job whose lease ran out this many times (its runner died or hung each time, perhaps
 * because of the job) is failed when next reclaimed instead of being run again.
 */
export const MAX_JOB_ATTEMPTS = 3;

/** The reason recorded on a job (and its library) failed by a claim after MAX_JOB_ATTEMPTS expired leases. */
export const ABANDONED_JOB_REASON = `job_abandoned: the job's runner stopped renewing its lease ${MAX_JOB_ATTEMPTS} times (a replica that died or hung while running it); it is not run again. Look at the replicas' logs around its start, then refresh the library to try again.`;

/** What a runner's write answers once its lease on the job is no longer its own: another runner took the job over. */
export function leaseLost(jobId: number): LdsError {
  return new LdsError("lease_lost", `Job ${jobId} was taken over by another runner (this runner's lease on it expired); this runner stopped without changing what is served.`, {
    hint: "Nothing to do: the runner holding the job now finishes it. If this repeats, raise LDS_JOB_LEASE_MS or look for replicas that stall.",
  });
}

/**
 * The vectors an ingestion gives `snippets.appendToBatch` beside its rows: one per row, in the same order. An engine
 * that keeps them with the records (PostgreSQL: each replica derives its search files from them) stores them in the
 * rows' transaction; one whose search index keeps them (SQLite's vectors.db) ignores them. Both refuse a count that
 * does not match, before writing anything, so that a caller's slip is found on either engine.
 */
export function requireVectorPerRow(rows: number, vectors: Float32Array[] | undefined): void {
  if (vectors === undefined || vectors.length === rows) return;
  throw new LdsError("validation_error", `${vectors.length} vectors were given for ${rows} snippets; nothing was written.`, {
    hint: "Give one vector per snippet, in the order of the snippets (or none).",
  });
}

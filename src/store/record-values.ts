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

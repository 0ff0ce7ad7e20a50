import type Database from "better-sqlite3";
import { LdsError } from "../errors.js";

export type LibraryState = "queued" | "fetching" | "parsing" | "embedding" | "finalized" | "failed";

/** Move a library to a state of its ingestion; `reason` explains a failure. */
export function setLibraryState(db: Database.Database, libraryId: string, state: LibraryState, reason: string | null = null): void {
  db.prepare("UPDATE libraries SET state = ?, state_reason = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?").run(state, reason, libraryId);
}

/** The spec's no_snippets_found, for a source in which nothing could be indexed. */
export function noSnippetsFound(libraryId: string): LdsError {
  return new LdsError("no_snippets_found", `No documentation snippets could be fetched for ${libraryId}: no Markdown, reStructuredText, text or notebook content was found.`, {
    hint: "Check that the repository holds documentation, or its lds.json/context7.json folders.",
  });
}

import type { BranchRecord, Library, LibraryState } from "./records.js";

/**
 * A row of `libraries` as both engines store it (the same columns: an archive's lds.db is the interchange):
 * `branches` is JSON text, `private` 0 or 1. Mapped to the record the contract hands over here, once for both.
 */
export interface LibraryRow {
  id: string;
  team_id: number | null;
  title: string;
  description: string;
  private: number;
  source: Library["source"];
  source_url: string | null;
  source_key: string | null;
  branches: string;
  owner_user_id: number | null;
  state: LibraryState;
  state_reason: string | null;
  updated_at: string;
}

/** The columns a LibraryRow is read from. */
export const LIBRARY_COLUMNS = "id, team_id, title, description, private, source, source_url, source_key, branches, owner_user_id, state, state_reason, updated_at";

/** A row as the record the contract hands over (its one served-branch record parsed here, once). */
export function toLibrary(row: LibraryRow): Library {
  return {
    id: row.id,
    teamId: row.team_id,
    title: row.title,
    description: row.description,
    private: row.private === 1,
    source: row.source,
    sourceUrl: row.source_url,
    sourceKey: row.source_key,
    branches: parseBranches(row.branches),
    ownerUserId: row.owner_user_id,
    state: row.state,
    stateReason: row.state_reason,
    updatedAt: row.updated_at,
  };
}

/** Most libraries' column is "[]" (or one record): skip the parser for the empty list. */
export const parseBranches = (text: string | null | undefined): BranchRecord[] => (!text || text === "[]" ? [] : (JSON.parse(text) as BranchRecord[]));

import type Database from "better-sqlite3";

/** A library as search results describe it (the shape clients of hosted services of this kind read). */
export interface LibrarySummary {
  id: string;
  title: string;
  description: string;
  branch: string;
  lastUpdateDate: string;
  /** "finalized" (has snippets to serve), "initial" (first processing under way) or "error" (failed, nothing to serve). */
  state: "initial" | "finalized" | "error";
  totalSnippets: number;
  totalTokens: number;
  versions: string[];
}

export interface LibraryRow {
  id: string;
  title: string;
  description: string;
  private: number;
  team_id: number | null;
  state: string;
  branches: string;
  updated_at: string;
}

export const LIBRARY_COLUMNS = "id, title, description, private, team_id, state, branches, updated_at";

/** Totals and versions of one library's current content, and its public state. */
export function summarise(db: Database.Database, row: LibraryRow): LibrarySummary {
  const totals = db.prepare("SELECT count(*) AS n, coalesce(sum(tokens), 0) AS tokens FROM snippets WHERE library_id = ? AND version = ''").get(row.id) as { n: number; tokens: number };
  const versions = db.prepare("SELECT name FROM library_versions WHERE library_id = ? ORDER BY fetched_at DESC").pluck().all(row.id) as string[];
  const branch = (JSON.parse(row.branches) as Array<{ name: string; fetchedAt: string }>)[0];
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    branch: branch?.name ?? "",
    lastUpdateDate: branch?.fetchedAt ?? row.updated_at,
    state: publicState(row.state, totals.n),
    totalSnippets: totals.n,
    totalTokens: totals.tokens,
    versions,
  };
}

/**
 * A library being refreshed, or whose refresh failed, still serves its last good snippets: to a client it is
 * finalized. Only a library with nothing to serve is "initial" (processing) or "error" (failed).
 */
function publicState(state: string, snippets: number): LibrarySummary["state"] {
  if (snippets > 0) return "finalized";
  return state === "failed" ? "error" : state === "finalized" ? "finalized" : "initial";
}

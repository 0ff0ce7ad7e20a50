import type { Library as StoredLibrary } from "../store/records.js";
import type { Store } from "../store/store.js";
import { libraryScores, type LibraryScores } from "./library-scores.js";

/** A library as search results describe it (the shape clients of hosted services of this kind read). */
export interface LibrarySummary extends LibraryScores {
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

/** The fields of a library a summary is made from. */
export type SummarisedLibrary = Pick<StoredLibrary, "id" | "title" | "description" | "private" | "teamId" | "state" | "branches" | "updatedAt">;

/** Totals and versions of one library's current content, and its public state. */
export async function summarise(store: Store, row: SummarisedLibrary): Promise<LibrarySummary> {
  const totals = await store.snippets.totals(row.id);
  const versions = await store.versions.names(row.id, "newest");
  const branch = row.branches[0];
  const lastUpdateDate = branch?.fetchedAt ?? row.updatedAt;
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    branch: branch?.name ?? "",
    lastUpdateDate,
    state: publicState(row.state, totals.n),
    totalSnippets: totals.n,
    totalTokens: totals.tokens,
    versions,
    ...libraryScores({ lastFetched: lastUpdateDate, failed: row.state === "failed", hasDescription: row.description !== "", totalSnippets: totals.n }),
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

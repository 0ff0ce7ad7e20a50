import type Database from "better-sqlite3";
import type { CanaryAnswer } from "../engine.js";
import { queryTerms } from "../../index/query-terms.js";
import { canaryTitles } from "./manifest-view.js";
import { bm25SnippetIds } from "../../index/sqlite/snippet-search.js";

/** Queries per library, libraries sampled, answers kept: enough to notice a changed index, small in the manifest. */
const PER_LIBRARY = 3;
const LIBRARIES = 20;
const TOP = 5;
/**
 * The time canaries may take. A query over a large index of common words costs ~30 ms (the 1 GiB benchmark
 * volume); without a budget, 600 of them added 90 s. Those computed by then are recorded. A backup computes them
 * beside the hashing of lds.db (about as long per GiB), so within this budget they add nothing to its time.
 */
const BUDGET_MS = 500;

/**
 * Canary queries for a restore drill: a few queries per library (titles of its snippets, spread over it) with the
 * ids of their best BM25 answers in this database. A restored copy must answer them the same way.
 */
export function canariesOf(db: Database.Database, budgetMs = BUDGET_MS): CanaryAnswer[] {
  const deadline = Date.now() + budgetMs;
  const canaries: CanaryAnswer[] = [];
  // One query of each library first, then the second ones, so that a tight budget still covers many libraries.
  const libraries = canaryTitles(db, PER_LIBRARY, LIBRARIES);
  for (let round = 0; round < PER_LIBRARY; round++) {
    for (const { libraryId, titles } of libraries) {
      const query = titles[round];
      if (query === undefined) continue;
      if (Date.now() > deadline && canaries.length > 0) return canaries;
      const top = answer(db, libraryId, query);
      if (top !== null) canaries.push({ libraryId, query, top });
    }
  }
  return canaries;
}

/** A canary's answer in `db`: the top snippet ids, or null for a query with nothing to search for. */
export function answer(db: Database.Database, libraryId: string, query: string): number[] | null {
  const terms = queryTerms(query);
  return terms.length > 0 ? bm25SnippetIds(db, libraryId, "", terms, TOP) : null;
}

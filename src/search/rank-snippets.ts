import type { OpenVolume } from "../ops/open-volume.js";
import { partitionOf } from "../vectors/vector-index.js";
import type { LibraryRef } from "./library-ref.js";
import { ftsExpression, queryTerms } from "./query-terms.js";

export type RankingMethod = "bm25" | "vector" | "fused";

/** How many candidates each ranking contributes before fusion: enough to fill any sensible token budget. */
const DEPTH = 100;
/** The k of reciprocal rank fusion (Cormack et al.): damps the weight of the very first ranks. */
const RRF_K = 60;
/** BM25 weights of title, description and content: a query word in a section's title says most about it. */
const BM25 = "bm25(snippets_fts, 4.0, 2.0, 1.0)";

/**
 * The snippet ids of one library version, best answer to `query` first. "fused" combines SQLite FTS5's BM25
 * (exact words) and vector similarity (related words and spellings) by reciprocal rank fusion, so a snippet that
 * both rank well comes first and one that only one of them finds still appears.
 */
export async function rankSnippets(volume: OpenVolume, ref: LibraryRef, query: string, method: RankingMethod = "fused", depth = DEPTH): Promise<number[]> {
  const lists: number[][] = [];
  if (method !== "vector") lists.push(bm25Ranking(volume, ref, query, depth));
  if (method !== "bm25") lists.push(await vectorRanking(volume, ref, query, depth));
  return method === "fused" ? fuse(lists) : lists[0]!;
}

function bm25Ranking(volume: OpenVolume, ref: LibraryRef, query: string, depth: number): number[] {
  const expression = ftsExpression(queryTerms(query));
  if (!expression) return [];
  return volume.db
    .prepare(
      `SELECT s.id FROM snippets_fts JOIN snippets s ON s.id = snippets_fts.rowid
       WHERE snippets_fts MATCH ? AND s.library_id = ? AND s.version = ?
       ORDER BY ${BM25} LIMIT ?`,
    )
    .pluck()
    .all(expression, ref.libraryId, ref.version, depth) as number[];
}

async function vectorRanking(volume: OpenVolume, ref: LibraryRef, query: string, depth: number): Promise<number[]> {
  const [vector] = await volume.embedder.embed([query]);
  return volume.vectors.nearest(vector!, depth, partitionOf(ref.libraryId, ref.version)).map((m) => m.snippetId);
}

/** Reciprocal rank fusion: each list gives 1 / (k + rank); ties keep the order of the first list. */
export function fuse(lists: number[][]): number[] {
  const scores = new Map<number, number>();
  for (const list of lists) list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (RRF_K + rank + 1)));
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

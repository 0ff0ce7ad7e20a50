import type { OpenVolume } from "../volume/open-volume.js";
import { partitionOf } from "../vectors/vector-index.js";
import type { LibraryRef } from "./library-ref.js";
import { ftsExpression, queryTerms } from "./query-terms.js";

export type RankingMethod = "bm25" | "vector" | "fused";

/** How many candidates each ranking contributes before fusion: enough to fill any sensible token budget. */
const DEPTH = 100;
/**
 * Weighted reciprocal rank fusion (Cormack et al.'s k of 60): the feature-hashing vectors are lexical and noisier
 * than BM25, so they count 0.7 of it. On the evaluation set every k from 2 to 60 gives the same result at this
 * weight (docs/benchmarks.md), so the choice is not tuned to a single point.
 */
const RRF_K = 60;
const WEIGHTS = { bm25: 1, vector: 0.7 };

/**
 * The snippet ids of one library version, best answer to `query` first. "fused" combines SQLite FTS5's BM25
 * (exact words) and vector similarity (related words and spellings) by reciprocal rank fusion, so a snippet that
 * both rank well comes first and one that only one of them finds still appears.
 */
export async function rankSnippets(volume: OpenVolume, ref: LibraryRef, query: string, method: RankingMethod = "fused", depth = DEPTH): Promise<number[]> {
  return (await rankSnippetsWithFallback(volume, ref, query, method, depth)).ids;
}

/**
 * As rankSnippets, and why BM25 ranked alone when vectors could not take part: the vector index is being rebuilt
 * (a new embedding provider), or the provider did not embed the query within its query timeout. Search answers
 * from BM25 then rather than failing or waiting.
 */
export async function rankSnippetsWithFallback(volume: OpenVolume, ref: LibraryRef, query: string, method: RankingMethod = "fused", depth = DEPTH): Promise<{ ids: number[]; fallback?: string }> {
  if (method === "bm25") return { ids: await bm25Ranking(volume, ref, query, depth) };
  if (volume.vectors.stale) return { ids: await bm25Ranking(volume, ref, query, depth), fallback: "the vector index is being rebuilt for a new embedding provider; ranked by BM25 alone" };
  let vector: Float32Array;
  try {
    [vector] = (await volume.embedder.embed([query], { timeoutMs: volume.embedder.queryTimeoutMs, attempts: 1 })) as [Float32Array];
  } catch (err) {
    if (!volume.embedder.remote) throw err;
    return { ids: await bm25Ranking(volume, ref, query, depth), fallback: `the embedding provider did not embed the query (${(err as Error).message.replace(/\.$/, "")}); ranked by BM25 alone` };
  }
  if (method === "vector") return { ids: await nearest(volume, ref, vector, depth) };
  // The scan is posted before BM25 starts: in the server it then runs in its worker thread while BM25 runs on this
  // one (an await between the two would serialise them).
  const vectors = nearest(volume, ref, vector, depth);
  const bm25 = await bm25Ranking(volume, ref, query, depth);
  return {
    ids: fuse([
      { ids: bm25, weight: WEIGHTS.bm25 },
      { ids: await vectors, weight: WEIGHTS.vector },
    ]),
  };
}

async function bm25Ranking(volume: OpenVolume, ref: LibraryRef, query: string, depth: number): Promise<number[]> {
  const expression = ftsExpression(queryTerms(query));
  if (!expression) return [];
  return volume.store.snippetSearch.rank(ref.libraryId, ref.version, expression, depth);
}

async function nearest(volume: OpenVolume, ref: LibraryRef, vector: Float32Array, depth: number): Promise<number[]> {
  const partition = partitionOf(ref.libraryId, ref.version);
  const matches = volume.vectorSearch ? await volume.vectorSearch.nearest(vector, depth, partition) : volume.vectors.nearest(vector, depth, partition);
  return matches.map((m) => m.snippetId);
}

/** Reciprocal rank fusion: each list gives weight / (k + rank); ties keep the order of the first list. */
export function fuse(lists: Array<{ ids: number[]; weight: number }>): number[] {
  const scores = new Map<number, number>();
  for (const { ids, weight } of lists) ids.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + weight / (RRF_K + rank + 1)));
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

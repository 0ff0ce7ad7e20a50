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
  if (method === "bm25") return bm25Ranking(volume, ref, query, depth);
  if (method === "vector") return vectorRanking(volume, ref, query, depth);
  // Embedded here, and the scan posted before BM25 starts: in the server the scan then runs in its worker thread
  // while BM25 runs on this one (an await between the two would serialise them).
  const [vector] = await volume.embedder.embed([query]);
  const vectors = nearest(volume, ref, vector!, depth);
  const bm25 = await bm25Ranking(volume, ref, query, depth);
  return fuse([
    { ids: bm25, weight: WEIGHTS.bm25 },
    { ids: await vectors, weight: WEIGHTS.vector },
  ]);
}

async function bm25Ranking(volume: OpenVolume, ref: LibraryRef, query: string, depth: number): Promise<number[]> {
  const expression = ftsExpression(queryTerms(query));
  if (!expression) return [];
  return volume.store.snippetSearch.rank(ref.libraryId, ref.version, expression, depth);
}

async function vectorRanking(volume: OpenVolume, ref: LibraryRef, query: string, depth: number): Promise<number[]> {
  const [vector] = await volume.embedder.embed([query]);
  return nearest(volume, ref, vector!, depth);
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

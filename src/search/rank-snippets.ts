import type { OpenVolume } from "../volume/open-volume.js";
import type { IndexBatch } from "../index/search-index.js";
import { queryTerms } from "../index/query-terms.js";
import type { LibraryRef } from "./library-ref.js";

export type RankingMethod = "bm25" | "vector" | "fused";

/** How many candidates each ranking contributes before fusion: enough to fill any sensible token budget. */
const DEPTH = 100;
/**
 * Score fusion: each ranking's scores divided by its best one (so 1 is "as good as this ranking gets for this
 * query" and 0 "no evidence"), summed with weights. The feature-hashing vectors are lexical and noisier than BM25,
 * so they count 0.7 of it: the weight the reciprocal rank fusion used before, kept rather than tuned again.
 * Unlike rank fusion, a clear BM25 winner keeps its lead when the vectors are unsure (docs/benchmarks.md,
 * "Retrieval quality", measured on a held-out question set too).
 */
const WEIGHTS = { bm25: 1, vector: 0.7 };

interface Scored {
  id: number;
  /** Higher is better; 0 or less is no evidence. */
  score: number;
}

/**
 * The snippet ids of one library version, best answer to `query` first. "fused" combines the index's word ranking
 * (BM25: exact words) and vector similarity (related words and spellings) by weighted score fusion, so a snippet that
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
  const live = async (): Promise<IndexBatch> => {
    const batch: IndexBatch = { libraryId: ref.libraryId, version: ref.version, batch: await volume.store.snippets.liveBatch(ref.libraryId, ref.version) };
    // An index that follows the records (a PostgreSQL replica's) fetches a batch published elsewhere first.
    if (volume.index.ready) await volume.index.ready(batch);
    return batch;
  };
  const bm25Ids = async () => (await bm25Ranking(volume, await live(), query, depth)).map((hit) => hit.id);
  if (method === "bm25") return { ids: await bm25Ids() };
  if (volume.index.stale) return { ids: await bm25Ids(), fallback: "the vector index is being rebuilt for a new embedding provider; ranked by BM25 alone" };
  let vector: Float32Array;
  try {
    [vector] = (await volume.embedder.embed([query], { timeoutMs: volume.embedder.queryTimeoutMs, attempts: 1 })) as [Float32Array];
  } catch (err) {
    if (!volume.embedder.remote) throw err;
    return { ids: await bm25Ids(), fallback: `the embedding provider did not embed the query (${(err as Error).message.replace(/\.$/, "")}); ranked by BM25 alone` };
  }
  // The batch of snippets served now (snippet batches): the index keeps its vectors apart.
  const batch = await live();
  if (method === "vector") return { ids: (await nearest(volume, batch, vector, depth)).map((hit) => hit.id) };
  // The scan is posted before BM25 starts: in the server it then runs in its search thread while BM25 runs (from
  // FTS5 on this thread, or from the word index in the other search thread: index/sqlite/search-threads.ts).
  const vectors = nearest(volume, batch, vector, depth);
  // Awaited below, after BM25: a scan that fails first (a timeout, a crashed thread) must not be an unhandled
  // rejection meanwhile, which would stop the server.
  vectors.catch(() => {});
  const bm25 = await bm25Ranking(volume, batch, query, depth);
  return {
    ids: fuse([
      { hits: bm25, weight: WEIGHTS.bm25 },
      { hits: await vectors, weight: WEIGHTS.vector },
    ]),
  };
}

/** BM25 scores of the live batch's snippets for the query's words (index/search-index.ts: `rank`). */
async function bm25Ranking(volume: OpenVolume, batch: IndexBatch, query: string, depth: number): Promise<Scored[]> {
  return volume.index.rank(batch, queryTerms(query), depth);
}

/**
 * The nearest snippets with a similarity score. The index's distance is cosine (d = 1 - cos); the score is
 * 1 - d²/2, the formula of unit vectors' L2 distance, which the index used before. It is kept on purpose: it keeps
 * weaker matches closer to the best one than 1 - d does, and fused better (tuning set hit@1 93.5% against 90.3%
 * with 1 - d, below BM25's 91.9%; held-out set 83.3% with either, measured 11-23 with bench/eval.js).
 */
async function nearest(volume: OpenVolume, batch: IndexBatch, vector: Float32Array, depth: number): Promise<Scored[]> {
  const matches = await volume.index.nearest(vector, depth, [batch]);
  return matches.map((m) => ({ id: m.id, score: 1 - (m.distance * m.distance) / 2 }));
}

/**
 * Weighted score fusion: every list's scores divided by its best, times its weight, summed per snippet; a snippet
 * one list lacks gets nothing from it. Ties keep the order of the first list, then the second.
 */
export function fuse(lists: Array<{ hits: Scored[]; weight: number }>): number[] {
  const totals = new Map<number, number>();
  for (const { hits, weight } of lists) {
    const best = Math.max(0, ...hits.map((h) => h.score));
    for (const hit of hits) totals.set(hit.id, (totals.get(hit.id) ?? 0) + (best > 0 ? (weight * Math.max(0, hit.score)) / best : 0));
  }
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

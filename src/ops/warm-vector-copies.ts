import type { OpenVolume } from "../volume/open-volume.js";
import { MIN_CACHED_VECTORS } from "../vectors/knn-worker.js";
import { copyBytesPerVector } from "../vectors/quantized-partition.js";
import { partitionOf } from "../vectors/vector-index.js";

/**
 * At the server's start, have the search thread copy the largest libraries' vectors into memory before anyone
 * searches them (vectors/partition-search.ts), largest first, as many as the budget holds: the first searches after
 * a restart are then as fast as the others, instead of scanning while a copy is built on demand. The same libraries'
 * word indexes for BM25 (store/word-search.ts) are built after them, under their own budget. Only a library's
 * current content; pinned versions are copied on their first search. Answers the libraries it asked for.
 */
export async function warmVectorCopies(volume: OpenVolume, budgetBytes: number): Promise<string[]> {
  const search = volume.vectorSearch;
  if (!search || budgetBytes <= 0 || volume.vectors.stale) return [];
  const large: Array<{ id: string; snippets: number }> = [];
  for (const library of await volume.store.libraries.list()) {
    const { n } = await volume.store.snippets.totals(library.id);
    if (n >= MIN_CACHED_VECTORS) large.push({ id: library.id, snippets: n });
  }
  large.sort((a, b) => b.snippets - a.snippets);
  const warmed: string[] = [];
  let planned = 0;
  for (const { id, snippets } of large) {
    const bytes = snippets * copyBytesPerVector(volume.vectors.dimensions);
    if (planned + bytes > budgetBytes) continue;
    planned += bytes;
    const batch = await volume.store.snippets.liveBatch(id, "");
    void search.warm(partitionOf(id, "", batch));
    void search.warmWords({ libraryId: id, version: "", batch });
    warmed.push(id);
  }
  return warmed;
}

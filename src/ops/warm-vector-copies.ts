import type { OpenVolume } from "../volume/open-volume.js";
import type { WarmCandidate } from "../index/search-index.js";

/**
 * At the server's start, have the search threads prepare the largest libraries' index parts before anyone searches
 * them (in SQLite: the vectors' in-memory copies, then the word indexes, index/sqlite/), largest first, as many as
 * the budget holds: the first searches after a restart are then as fast as the others, instead of waiting while a
 * copy is built on demand. Only a library's current content; pinned versions are prepared on their first search.
 * Answers the libraries it asked for.
 */
export async function warmVectorCopies(volume: OpenVolume, budgetBytes: number): Promise<string[]> {
  const { index, store } = volume;
  if (budgetBytes <= 0 || index.stale) return [];
  const large: WarmCandidate[] = [];
  for (const library of await store.libraries.list()) {
    const { n } = await store.snippets.totals(library.id);
    if (n >= index.warmFrom) large.push({ libraryId: library.id, version: "", batch: await store.snippets.liveBatch(library.id, ""), snippets: n });
  }
  return index.warm(large, budgetBytes);
}

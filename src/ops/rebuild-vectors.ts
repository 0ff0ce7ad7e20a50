import type { OpenVolume } from "../volume/open-volume.js";
import { LdsError } from "../errors.js";
import { embeddingText } from "../indexing/snippet.js";
import type { IndexBatch, IndexedSnippet } from "../index/search-index.js";
import type { EmbeddableSnippet } from "../store/records.js";

const BATCH = 1000;

export interface RebuildOptions {
  /** Rebuild even an index that is not stale (`lds index rebuild`). */
  force?: boolean;
  /** Refill the words too (FTS5's index in SQLite), not only the vectors. */
  words?: boolean;
}

/**
 * Refill a stale vector index from the snippets in the records (the index is derived data): after an upgrade that
 * changed the embedder or the index layout, or a restore of an archive made by an older version; with `force`,
 * whatever its state (`lds index rebuild`, which asks for the words as well). An interrupted rebuild leaves the
 * index stale, and the next start simply runs it again.
 */
export async function rebuildVectors(volume: OpenVolume, onProgress?: (done: number, total: number) => void, signal?: AbortSignal, options: RebuildOptions = {}): Promise<number> {
  const { store, index, embedder } = volume;
  if (!index.stale && !options.force) return 0;
  // Always from an empty table: an interrupted rebuild, or a table of another layout or embedder, starts over.
  await index.beginRebuild({ vectors: true, words: options.words ?? false });
  const total = await store.snippets.countAll();
  let done = 0;
  for await (const rows of store.snippets.pages(BATCH)) {
    // A server stopping mid-rebuild leaves the index stale: the next start rebuilds it again.
    if (signal?.aborted) throw new LdsError("interrupted", "The vector index rebuild was stopped; it runs again at the next start.");
    const embedded = await embedder.embed(rows.map(embeddingText), { signal });
    for (const { batch, snippets } of byBatch(rows, embedded)) await index.add(batch, snippets);
    done += rows.length;
    onProgress?.(done, total);
  }
  await index.completeRebuild();
  return done;
}

/** A page's rows grouped by their batch, in order (a page is in id order: mostly one batch). */
function byBatch(rows: EmbeddableSnippet[], embedded: Float32Array[]): Array<{ batch: IndexBatch; snippets: IndexedSnippet[] }> {
  const groups: Array<{ batch: IndexBatch; snippets: IndexedSnippet[] }> = [];
  rows.forEach((row, i) => {
    const last = groups.at(-1)?.batch;
    if (!last || last.libraryId !== row.libraryId || last.version !== row.version || last.batch !== row.batch) {
      groups.push({ batch: { libraryId: row.libraryId, version: row.version, batch: row.batch }, snippets: [] });
    }
    groups.at(-1)!.snippets.push({ id: row.id, vector: embedded[i]! });
  });
  return groups;
}

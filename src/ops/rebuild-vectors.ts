import type { OpenVolume } from "../volume/open-volume.js";
import { LdsError } from "../errors.js";
import { embeddingText } from "../indexing/snippet.js";
import { partitionOf } from "../vectors/vector-index.js";

const BATCH = 1000;

/**
 * Refill a stale vector index from the snippets in lds.db (vectors are derived data): after an upgrade that
 * changed the embedder or the index layout, or a restore of an archive made by an older version. An interrupted
 * rebuild leaves the index stale, and the next start simply runs it again.
 */
export async function rebuildVectors(volume: OpenVolume, onProgress?: (done: number, total: number) => void, signal?: AbortSignal): Promise<number> {
  const { store, vectors, embedder } = volume;
  if (!vectors.stale) return 0;
  // Always from an empty table: an interrupted rebuild, or a table of another layout or embedder, starts over.
  vectors.recreate();
  const total = await store.snippets.countAll();
  let done = 0;
  for await (const rows of store.snippets.pages(BATCH)) {
    // A server stopping mid-rebuild leaves the index stale: the next start rebuilds it again.
    if (signal?.aborted) throw new LdsError("interrupted", "The vector index rebuild was stopped; it runs again at the next start.");
    const embedded = await embedder.embed(rows.map(embeddingText), { signal });
    vectors.upsert(rows.map((row, i) => ({ snippetId: row.id, partition: partitionOf(row.libraryId, row.version, row.batch), vector: embedded[i]! })));
    done += rows.length;
    onProgress?.(done, total);
  }
  vectors.markComplete();
  return done;
}

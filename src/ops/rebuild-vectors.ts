import type { OpenVolume } from "../volume/open-volume.js";
import { embeddingText } from "../indexing/snippet.js";
import { partitionOf } from "../vectors/vector-index.js";

const BATCH = 1000;

/**
 * Refill a stale vector index from the snippets in lds.db (vectors are derived data): after an upgrade that
 * changed the embedder or the index layout, or a restore of an archive made by an older version. An interrupted
 * rebuild leaves the index stale, and the next start simply runs it again.
 */
export async function rebuildVectors(volume: OpenVolume, onProgress?: (done: number, total: number) => void): Promise<number> {
  const { db, vectors, embedder } = volume;
  if (!vectors.stale) return 0;
  // Always from an empty table: an interrupted rebuild, or a table of another layout or embedder, starts over.
  vectors.recreate();
  const total = db.prepare("SELECT count(*) FROM snippets").pluck().get() as number;
  const page = db.prepare("SELECT id, library_id, version, title, description, content FROM snippets WHERE id > ? ORDER BY id LIMIT ?");
  let last = 0;
  let done = 0;
  for (;;) {
    const rows = page.all(last, BATCH) as Array<{ id: number; library_id: string; version: string; title: string; description: string; content: string }>;
    if (rows.length === 0) break;
    const embedded = await embedder.embed(rows.map(embeddingText));
    vectors.upsert(rows.map((row, i) => ({ snippetId: row.id, partition: partitionOf(row.library_id, row.version), vector: embedded[i]! })));
    last = rows[rows.length - 1]!.id;
    done += rows.length;
    onProgress?.(done, total);
  }
  vectors.markComplete();
  return done;
}

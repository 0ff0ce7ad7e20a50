import type { OpenVolume } from "../volume/open-volume.js";
import { partitionOf } from "../vectors/vector-index.js";
import { embeddingText, estimateTokens, type Snippet } from "./snippet.js";

const EMBED_BATCH = 256;

/**
 * Replace all snippets and vectors of a library version ("" = its current content) so that a reader never sees half of the old and half of the new:
 * new vectors are written first, then one SQLite transaction swaps the snippets, then the old vectors go.
 * Between the steps the vector index may hold ids that are not (or no longer) snippets; readers join vectors
 * with snippets, so such ids are invisible. A crash leaves the old library intact plus invisible vectors.
 */
export async function replaceLibrarySnippets(volume: OpenVolume, libraryId: string, snippets: Snippet[], version = ""): Promise<number> {
  const { db, vectors, embedder } = volume;
  const embedded: Float32Array[] = [];
  for (let i = 0; i < snippets.length; i += EMBED_BATCH) {
    const batch = snippets.slice(i, i + EMBED_BATCH);
    embedded.push(...(await embedder.embed(batch.map(embeddingText))));
    // Let the server answer requests between batches: a local embedder resolves at once, and awaiting a resolved
    // promise does not give the event loop a turn (100,000 snippets would otherwise stall it for seconds).
    await new Promise((resolve) => setImmediate(resolve));
  }
  const oldIds = db.prepare("SELECT id FROM snippets WHERE library_id = ? AND version = ? ORDER BY id").pluck().all(libraryId, version) as number[];
  const insert = db.prepare(
    `INSERT INTO snippets (library_id, version, kind, title, description, language, content, source_path, tokens, page_title)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const partition = partitionOf(libraryId, version);
  db.exec("BEGIN IMMEDIATE");
  try {
    const newIds = snippets.map((s) =>
      Number(insert.run(libraryId, version, s.kind, s.title, s.description, s.language, s.content, s.anchor ? `${s.sourcePath}#${s.anchor}` : s.sourcePath, estimateTokens(s.content), s.pageTitle ?? null).lastInsertRowid),
    );
    vectors.upsert(newIds.map((snippetId, i) => ({ snippetId, partition, vector: embedded[i]! })));
    // New rows get rowids above every existing one (SQLite assigns max(rowid) + 1), so the old set is "this
    // library's ids up to the largest old id": one bound value, however many snippets (SQLite caps bound
    // variables at 32,766, which an id list would exceed on a large library).
    if (oldIds.length) db.prepare("DELETE FROM snippets WHERE library_id = ? AND version = ? AND id <= ?").run(libraryId, version, oldIds[oldIds.length - 1]);
    db.exec("COMMIT");
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
  vectors.remove(oldIds);
  return snippets.length;
}

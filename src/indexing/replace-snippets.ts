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
  const { store, vectors, embedder } = volume;
  const embedded: Float32Array[] = [];
  for (let i = 0; i < snippets.length; i += EMBED_BATCH) {
    const batch = snippets.slice(i, i + EMBED_BATCH);
    embedded.push(...(await embedder.embed(batch.map(embeddingText))));
    // Let the server answer requests between batches: a local embedder resolves at once, and awaiting a resolved
    // promise does not give the event loop a turn (100,000 snippets would otherwise stall it for seconds).
    await new Promise((resolve) => setImmediate(resolve));
  }
  const partition = partitionOf(libraryId, version);
  const rows = snippets.map((s) => ({
    kind: s.kind,
    title: s.title,
    description: s.description,
    language: s.language,
    content: s.content,
    sourcePath: s.anchor ? `${s.sourcePath}#${s.anchor}` : s.sourcePath,
    tokens: estimateTokens(s.content),
    pageTitle: s.pageTitle ?? null,
  }));
  const oldIds = await store.snippets.replace(libraryId, version, rows, (newIds) =>
    vectors.upsert(newIds.map((snippetId, i) => ({ snippetId, partition, vector: embedded[i]! }))),
  );
  vectors.remove(oldIds);
  return snippets.length;
}

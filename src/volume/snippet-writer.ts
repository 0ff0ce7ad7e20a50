import type { NewSnippet } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { VectorIndex } from "../vectors/vector-index.js";

/** Where an ingestion writes: a library version's open batch, and the vector partition of that batch. */
export interface BatchTarget {
  libraryId: string;
  version: string;
  batch: number;
  partition: string;
}

/**
 * The writes of an ingestion and of the purge of replaced batches: the bulk of what a library's refresh writes.
 * Inline in a command; in the server, on a thread of its own (snippet-writer-thread.ts), because a write can wait
 * on the disk for hundreds of milliseconds behind the writeback of a large ingestion, and on the event loop every
 * request waits with it (docs/benchmarks.md, "The swap's stalls").
 */
export interface SnippetWriter {
  /** Add snippets to the open batch with their vectors, in one transaction of each database; answers their ids. */
  append(target: BatchTarget, rows: NewSnippet[], vectors: Float32Array[]): Promise<number[]>;
  /** One bounded step of the full-text index's upkeep (store: snippets.tidyIndex). */
  tidy(): Promise<void>;
  /**
   * Delete up to `limit` rows of one retired batch, their vectors first (a vector without its row is invisible),
   * then one step of upkeep; answers how many went, 0 when no retired batch has rows left.
   */
  purge(limit: number): Promise<number>;
}

/** The writes made here, through this store and vector index (a command's, or the writer thread's own). */
export function inlineSnippetWriter(store: Store, vectors: VectorIndex): SnippetWriter {
  return {
    append({ libraryId, version, batch, partition }, rows, embedded) {
      return store.snippets.appendToBatch(libraryId, version, batch, rows, (ids) =>
        vectors.upsert(ids.map((snippetId, i) => ({ snippetId, partition, vector: embedded[i]! }))),
      );
    },
    tidy: () => store.snippets.tidyIndex(),
    async purge(limit) {
      const chunk = await store.snippets.retiredChunk(limit);
      if (!chunk) return 0;
      vectors.remove(chunk.ids);
      await store.snippets.deleteRetiredRows(chunk);
      await store.snippets.tidyIndex();
      return chunk.ids.length;
    },
  };
}

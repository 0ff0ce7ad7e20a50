import type { NewSnippet } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { IndexBatch, SearchIndex } from "../index/search-index.js";

/** Where an ingestion writes: a library version's open batch. */
export type BatchTarget = IndexBatch;

/**
 * The writes of an ingestion and of the purge of replaced batches: the bulk of what a library's refresh writes.
 * Inline in a command; in the server, on a thread of its own (snippet-writer-thread.ts), because a write can wait
 * on the disk for hundreds of milliseconds behind the writeback of a large ingestion, and on the event loop every
 * request waits with it (docs/benchmarks.md, "The swap's stalls").
 */
export interface SnippetWriter {
  /** Add snippets to the open batch (the records), then their vectors to the search index; answers their ids. */
  append(target: BatchTarget, rows: NewSnippet[], vectors: Float32Array[]): Promise<number[]>;
  /** One bounded step of the search index's upkeep (index: upkeep). */
  tidy(): Promise<void>;
  /**
   * Delete up to `limit` rows of one retired batch, from the search index first (an index entry without its row is
   * invisible), then one step of upkeep; answers how many went, 0 when no retired batch has rows left.
   */
  purge(limit: number): Promise<number>;
}

/** The writes made here, through this store and search index (a command's, or the writer thread's own). */
export function inlineSnippetWriter(store: Store, index: SearchIndex): SnippetWriter {
  return {
    async append(target, rows, embedded) {
      const ids = await store.snippets.appendToBatch(target.libraryId, target.version, target.batch, rows, embedded);
      // The vectors go with the rows too: an engine whose replicas derive their search files from the records
      // (PostgreSQL) keeps them there, in the rows' transaction. The records first, then the index. Should the process die in between, the batch is unpublished: it is
      // retired at the next start (store: retireUnfinished) and purged, vectors included, so a snippet without its
      // vector is never served. The batch is published only after every chunk's vectors are in (replace-snippets.ts
      // awaits each append before publishBatch): keep that order.
      await index.add(
        target,
        ids.map((id, i) => ({ id, vector: embedded[i]! })),
      );
      return ids;
    },
    tidy: () => index.upkeep(),
    async purge(limit) {
      const chunk = await store.snippets.retiredChunk(limit);
      if (!chunk) return 0;
      await index.remove(chunk.ids);
      await store.snippets.deleteRetiredRows(chunk);
      await index.upkeep();
      return chunk.ids.length;
    },
  };
}

import type pg from "pg";
import type { IndexBatch, SearchIndex } from "../../index/search-index.js";
import type { StoredSnippet } from "../../store/records.js";
import { openSearchMirrorFiles } from "../sqlite/search-mirror-files.js";
import { followBatches, type FollowerLag, type FollowerOptions } from "./search-follower.js";

/**
 * The search side of a replica whose records are in PostgreSQL, in one call: its search files under the data
 * directory (`<data dir>/search/`, SQLite's search index over a copy of the live batches), caught up with the
 * database before this answers, then followed (LISTEN, poll, reconnects). The PostgreSQL engine's open gives `index`
 * as the volume's search index, calls `ensureLive` before a request ranks a batch, reports `lag` in /api/health, and
 * calls `close` when the volume closes.
 */
export interface SearchReplica {
  /**
   * Ranks on the replica's files with the SQLite engine's code; its writes do nothing (the follower fills the files);
   * `ready` is `ensureLive`.
   */
  readonly index: SearchIndex;
  ensureLive(libraryId: string, version: string, batch: number): Promise<void>;
  lag(): FollowerLag;
  /** The snippets of the batch these files serve for a library version (search-mirror-files.ts, `load`). */
  loadHeld(libraryId: string, version: string, ids: number[]): StoredSnippet[];
  /** Fetch whatever is missing now (a test, or an operator's nudge); the follower does it by itself. */
  catchUp(): Promise<void>;
  close(): Promise<void>;
}

export interface SearchReplicaOptions extends Omit<FollowerOptions, "pool" | "url"> {
  /** The records' pool (the store's): the fetches' queries share it. */
  pool: pg.Pool;
  url: string;
  dataDir: string;
  /** The embedder whose vectors the records hold: the files' vector table is made for it. */
  embedder: { id: string; dimensions: number };
}

export async function startSearchReplica(options: SearchReplicaOptions): Promise<SearchReplica> {
  const mirror = await openSearchMirrorFiles(options.dataDir, options.embedder);
  const follower = followBatches(mirror, options);
  const close = async () => {
    await follower.close();
    mirror.close();
  };
  try {
    await follower.catchUp();
  } catch (err) {
    await close();
    throw err;
  }
  // The volume's index: the files' own, which waits for a live batch before a request ranks it (SearchIndex.ready).
  const index: SearchIndex = Object.create(mirror.index, {
    ready: { value: (batch: IndexBatch) => follower.ensureLive(batch.libraryId, batch.version, batch.batch) },
  }) as SearchIndex;
  return { index, ensureLive: follower.ensureLive, lag: follower.lag, loadHeld: mirror.load, catchUp: follower.catchUp, close };
}

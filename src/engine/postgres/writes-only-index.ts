import type { SearchIndex } from "../../index/search-index.js";
import { refusalOnPostgres } from "./not-yet.js";

/**
 * The search index of a command that writes snippet batches into PostgreSQL's records and ranks nothing (an
 * ingestion from the command line): on PostgreSQL the search index is each serving replica's files, which their
 * followers fill from the records once a batch is published, so this one takes no part. Its writes, preparations,
 * retirements and probes do nothing; a ranking or a rebuild refuses (engine_unsupported naming `command`): nothing
 * of this process has search files to answer from.
 */
export function writesOnlySearchIndex(command: string, embedder: { id: string; dimensions: number }): SearchIndex {
  const refuse = (): never => {
    throw refusalOnPostgres("search", command);
  };
  return {
    dimensions: embedder.dimensions,
    // The vectors go into the records with the rows (snippet_vectors), made by this embedder: nothing here to rebuild.
    stale: false,
    builtBy: embedder.id,
    add: async () => {},
    remove: async () => {},
    removeLibrary: async () => {},
    rank: async () => refuse(),
    nearest: async () => refuse(),
    libraryRelevance: async () => refuse(),
    statistics: async () => refuse(),
    firstWithoutVector: async () => refuse(),
    upkeep: async () => {},
    beginRebuild: async () => refuse(),
    completeRebuild: async () => refuse(),
    prepare: async () => {},
    retire: () => {},
    probe: async () => [],
    startSearchThreads: () => refuse(),
    warm: () => refuse(),
    warmFrom: Number.POSITIVE_INFINITY,
    close: () => {},
  };
}

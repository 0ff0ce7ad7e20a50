/**
 * The search index: derived data, fed from the records' snippet batches and rebuildable from them at any time
 * (`lds index rebuild`). It answers the two rankings of a search (words and vectors) and library relevance; the
 * records (store/store.ts) stay the truth. Engine-neutral: no engine type, no query syntax; a query is a list of
 * words (index/query-terms.ts). The SQLite implementation is index/sqlite/sqlite-search-index.ts.
 *
 * Ordering the writer keeps (crash safety): a batch's snippets are appended to the records first, then their
 * vectors are added here with the ids the records answered, and only then is the batch published. A crash in
 * between leaves an unpublished batch, which is retired at the next start, vectors included: a snippet without its
 * vector is never served.
 */

/** A library version's snippet batch ("" = the library's current content): what the index keeps apart. */
export interface IndexBatch {
  libraryId: string;
  version: string;
  batch: number;
}

/** A snippet as the index takes it: its id in the records and its embedding. */
export interface IndexedSnippet {
  id: number;
  vector: Float32Array;
}

/** A ranked snippet: higher is better, > 0. */
export interface ScoredSnippet {
  id: number;
  score: number;
}

/** A nearest snippet: cosine distance (0 = same direction). */
export interface NearSnippet {
  id: number;
  distance: number;
}

/** Counts for `lds inspect` and the overview. */
export interface IndexStatistics {
  /** Snippets that have a vector. */
  vectors: number;
  dimensions: number;
  /** The embedder whose vectors the index holds (or is being filled with). */
  builtBy: string | undefined;
  stale: boolean;
}

/** The parts of the index a rebuild refills: vectors (from embeddings) and the words (from the snippets' text). */
export interface RebuildParts {
  vectors: boolean;
  words: boolean;
}

/** What the server's search threads report (it logs them): a large batch's in-memory part, ready or too large. */
export interface IndexPartMade {
  kind: "vectors" | "words";
  /** As an operator names it: "/owner/repo" or "/owner/repo (version v2)". */
  library: string;
  /** Rows (vectors or snippets) read. */
  rows: number;
  bytes: number;
  ms: number;
  overBudget?: boolean;
  /** Why the part could not be built (its searches stay slower, with the same answers). */
  failed?: string;
}

export interface SearchThreadSettings {
  /** A search longer than this fails with a timeout (undefined: the engine's default). */
  timeoutMs: number | undefined;
  /** Memory the in-memory vector copies may hold together. */
  vectorCacheBytes: number;
  /** Memory the word indexes may hold together. */
  wordIndexBytes: number;
}

/** A search made by an ingestion of its own new batch (SearchIndex.probe): a few words and an embedding. */
export interface IndexProbe {
  words: string[];
  vector: Float32Array;
}

/** A library's current content, as large as `snippets`, to prepare before its first search. */
export interface WarmCandidate extends IndexBatch {
  snippets: number;
}

export interface SearchIndex {
  readonly dimensions: number;
  /**
   * True when the stored vectors cannot be used as they are (another layout or embedder, an unfinished rebuild):
   * searches rank by words alone until a rebuild refills them.
   */
  readonly stale: boolean;
  /** The embedder whose vectors the index holds, as it recorded it. */
  readonly builtBy: string | undefined;

  /** Index a batch's snippets (ids answered by `store.snippets.appendToBatch`), before the batch is published. */
  add(batch: IndexBatch, snippets: IndexedSnippet[]): Promise<void>;
  /** Forget these snippets (a retired batch's chunk, before its rows are deleted). */
  remove(snippetIds: number[]): Promise<void>;
  /** Forget a removed library: its snippets' ids as `store.libraries.remove` answered them. */
  removeLibrary(libraryId: string, snippetIds: number[]): Promise<void>;

  /**
   * Before a request ranks `batch`, the live batch the records just named: wait until the index holds it. For an
   * index that follows the records (a PostgreSQL replica's files, which may not have fetched a batch published a
   * moment ago by another replica), so that a request never ranks an older batch nor finds nothing. Absent where
   * the index is written with the records (SQLite): it holds every live batch already.
   */
  ready?(batch: IndexBatch): Promise<void>;
  /** A library version's live batch's snippets matching any of `terms`, best first (BM25 or the engine's own). */
  rank(batch: IndexBatch, terms: string[], depth: number): Promise<ScoredSnippet[]>;
  /** The `k` snippets nearest `vector` among these batches (one batch per library version searched). */
  nearest(vector: Float32Array, k: number, batches: IndexBatch[]): Promise<NearSnippet[]>;
  /** For each library, its current content's best snippet's relevance to `terms` (0 when nothing matches). */
  libraryRelevance(terms: string[], libraryIds: string[]): Promise<Map<string, number>>;

  statistics(): Promise<IndexStatistics>;
  /** Integrity: the first of these snippets that has no vector; undefined when each has one. */
  firstWithoutVector(snippetIds: number[]): Promise<number | undefined>;
  /** A short, bounded step of upkeep, between the chunks of a large write (an engine without any: nothing). */
  upkeep(): Promise<void>;

  /**
   * Rebuild from the records: `beginRebuild` empties the parts asked for (words are refilled from the records at
   * once; vectors are `add`ed by the caller, page by page, with the embedder's vectors), `completeRebuild` marks the
   * vectors whole again. Until then the index is stale; an interrupted rebuild starts over.
   */
  beginRebuild(parts: RebuildParts): Promise<void>;
  completeRebuild(): Promise<void>;

  /**
   * For a long-running server: searches answered on threads of their own, which keep in-memory copies of large
   * batches' parts (an engine without threads: answers on the caller's thread, as before). `stop` ends them.
   */
  /**
   * Before a batch is published: build its in-memory search parts now and wait for them (at most `boundMs`), so that
   * its first searches are as fast as later ones (it "goes live warm"). Nothing to do without search threads or for a
   * small batch; never rejects (past the bound the batch is published anyway and its parts finish on demand).
   */
  prepare(batch: IndexBatch, snippets: number, signal?: AbortSignal, boundMs?: number): Promise<void>;
  /** After a batch was replaced by its successor: drop its in-memory parts now, not at a later sweep. */
  retire(batch: IndexBatch): void;
  /**
   * Once a large batch is live and the replaced one purged: one search of it as a reader's would be, so that what
   * is left of a first search's cost after a change is paid before the library shows finalized. Answers the nearest
   * snippets' ids (the caller reads their rows); [] when there is nothing to pay. Bounded, and ended by `signal`;
   * never rejects.
   */
  probe(batch: IndexBatch, snippets: number, probe: IndexProbe, signal?: AbortSignal): Promise<number[]>;
  startSearchThreads(settings: SearchThreadSettings, onPart: (made: IndexPartMade) => void): { stop(): Promise<void> };
  /** Have the search threads prepare these batches' parts, largest first, within `budgetBytes`; answers the libraries asked for. */
  warm(candidates: WarmCandidate[], budgetBytes: number): string[];
  /** The smallest batch worth preparing in memory (smaller ones are searched as stored, in a few milliseconds). */
  readonly warmFrom: number;

  close(): void;
}

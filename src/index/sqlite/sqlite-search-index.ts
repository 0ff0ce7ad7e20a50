import type Database from "better-sqlite3";
import type { IndexBatch, NearSnippet, SearchIndex } from "../search-index.js";
import { ftsExpression } from "./fts-expression.js";
import { prepareBatchParts, probeBatch, retireBatchParts } from "./prepare-batch.js";
import { MIN_CACHED_VECTORS, type VectorSearch } from "./knn-worker.js";
import { copyBytesPerVector } from "./quantized-partition.js";
import { startServerSearchThreads } from "./search-threads.js";
import { bm25ScoredSnippets, libraryRelevance } from "./snippet-search.js";
import { partitionOf, type VectorIndex, type VectorMatch } from "./vector-index.js";

/** The SQLite search index, with what only SQLite callers (tests, the engine) reach: its vector table and threads. */
export interface SqliteSearchIndex extends SearchIndex {
  readonly vectors: VectorIndex;
  /** Searches answered by these threads from now on (the server's, or a test's); undefined: on this thread. */
  useSearchThreads(threads: VectorSearch | undefined): void;
  /** How to checkpoint both files now (the server's checkpoint thread); undefined: nobody checkpoints on request. */
  useCheckpoint(checkpoint: (() => Promise<void>) | undefined): void;
}

/** FTS5 pages merged per upkeep step: a few milliseconds, between the chunks of a large write. */
const MERGE_PAGES = 150;

/**
 * The search index of the SQLite engine: words in FTS5, vectors in sqlite-vec (vectors.db), large batches' parts in
 * memory on the server's search threads (knn-worker.ts: quantized copies, word indexes).
 *
 * FTS5 stays inside lds.db, fed by its triggers on `snippets` (store/migrations.ts): a snippet's words are indexed
 * in the transaction that writes it, so an online snapshot of lds.db (one file) is consistent with itself, words
 * and records alike. `add` therefore writes the vectors only; the words need nothing. The vectors live in
 * vectors.db, written after the records (search-index.ts says why that order is safe).
 */
export function createSqliteSearchIndex(db: Database.Database, vectors: VectorIndex, files: { store: string; vectors: string }): SqliteSearchIndex {
  let threads: VectorSearch | undefined;
  let checkpoint: (() => Promise<void>) | undefined;
  const nearestIn = async (vector: Float32Array, k: number, batch: IndexBatch): Promise<VectorMatch[]> => {
    const partition = partitionOf(batch.libraryId, batch.version, batch.batch);
    return threads ? threads.nearest(vector, k, partition) : vectors.nearest(vector, k, partition);
  };
  const near = (matches: VectorMatch[]): NearSnippet[] => matches.map((m) => ({ id: m.snippetId, distance: m.distance }));

  return {
    vectors,
    get dimensions() {
      return vectors.dimensions;
    },
    get stale() {
      return vectors.stale;
    },
    get builtBy() {
      return vectors.builtBy;
    },
    warmFrom: MIN_CACHED_VECTORS,
    useSearchThreads(next) {
      threads = next;
    },
    useCheckpoint(next) {
      checkpoint = next;
    },

    async add({ libraryId, version, batch }, snippets) {
      const partition = partitionOf(libraryId, version, batch);
      vectors.upsert(snippets.map(({ id, vector }) => ({ snippetId: id, partition, vector })));
    },
    async remove(snippetIds) {
      vectors.remove(snippetIds);
    },
    // The library's words left with its rows (FTS5's delete trigger); its vectors go by id.
    async removeLibrary(_libraryId, snippetIds) {
      vectors.remove(snippetIds);
    },

    async rank(batch, terms, depth) {
      const expression = ftsExpression(terms);
      if (!expression) return [];
      // From the search thread's word index of the batch when it has one (the same scores and order in a fraction of
      // the time: word-search.ts), else from FTS5 on this thread. A thread that fails or times out costs the ranking
      // its speed, not its answer.
      const indexed = await threads?.rankWords({ ...batch, words: terms, depth }).catch(() => undefined);
      return indexed ?? bm25ScoredSnippets(db, batch.libraryId, batch.version, expression, depth);
    },
    async nearest(vector, k, batches) {
      if (batches.length === 1) return near(await nearestIn(vector, k, batches[0]!));
      const all = (await Promise.all(batches.map((batch) => nearestIn(vector, k, batch)))).flat();
      return near(all.sort((a, b) => a.distance - b.distance).slice(0, k));
    },
    async libraryRelevance(terms, libraryIds) {
      const expression = ftsExpression(terms);
      return expression ? libraryRelevance(db, expression, libraryIds) : new Map(libraryIds.map((id) => [id, 0]));
    },

    async statistics() {
      return { vectors: vectors.count(), dimensions: vectors.dimensions, builtBy: vectors.builtBy, stale: vectors.stale };
    },
    async firstWithoutVector(snippetIds) {
      return snippetIds.find((id) => !vectors.has(id));
    },
    // FTS5 merges up to MERGE_PAGES pages of its segments (schema 11 turned its automatic merging off, which did this
    // work inside writers' transactions, unbounded): writers call it between their chunks, so that the index stays
    // as compact as before without a long pause.
    async upkeep() {
      db.prepare("INSERT INTO snippets_fts (snippets_fts, rank) VALUES ('merge', ?)").run(MERGE_PAGES);
    },

    async beginRebuild(parts) {
      // FTS5's 'rebuild' reads every row of `snippets` again: words are whole when it returns.
      if (parts.words) db.prepare("INSERT INTO snippets_fts (snippets_fts) VALUES ('rebuild')").run();
      if (parts.vectors) vectors.recreate();
    },
    async completeRebuild() {
      vectors.markComplete();
    },

    startSearchThreads(settings, onPart) {
      const started = startServerSearchThreads(files, settings, onPart);
      threads = started;
      return {
        async stop() {
          if (threads === started) threads = undefined;
          await started.close();
        },
      };
    },
    prepare(batch, snippets, signal, boundMs) {
      return prepareBatchParts(threads, vectors.stale, batch, snippets, signal, boundMs);
    },
    retire(batch) {
      retireBatchParts(threads, batch);
    },
    probe(batch, snippets, probe, signal) {
      return probeBatch(threads, vectors.stale, batch, snippets, probe, signal, checkpoint);
    },
    warm(candidates, budgetBytes) {
      if (!threads || budgetBytes <= 0 || vectors.stale) return [];
      const warmed: string[] = [];
      let planned = 0;
      for (const candidate of [...candidates].sort((a, b) => b.snippets - a.snippets)) {
        const bytes = candidate.snippets * copyBytesPerVector(vectors.dimensions);
        if (planned + bytes > budgetBytes) continue;
        planned += bytes;
        // Not awaited: the server's start goes on while the threads prepare (each build's end is logged).
        void threads.warm(partitionOf(candidate.libraryId, candidate.version, candidate.batch));
        void threads.warmWords({ libraryId: candidate.libraryId, version: candidate.version, batch: candidate.batch });
        warmed.push(candidate.libraryId);
      }
      return warmed;
    },

    close() {
      vectors.close();
    },
  };
}

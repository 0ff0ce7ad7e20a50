import Database from "better-sqlite3";
import { ftsStatisticsReader, readVarints } from "./fts-statistics.js";
import { FtsTokenizer, tokenizerOf } from "./fts-tokenizer.js";
import { collectBuildGarbage } from "../../util/young-garbage.js";
import { MMAP_BYTES } from "../../store/sqlite/mapped-reads.js";
import { liveBatchRecord, servableBatchStart } from "../../store/sqlite/snippet-batches.js";
import { COLUMN_WEIGHTS } from "./snippet-search.js";
import type { WordIndex, WordRanking } from "./word-index.js";
import { WordIndexBuilder } from "./word-index-builder.js";

export interface WordSearchOptions {
  /** Memory the word indexes may hold together; the least recently searched leaves first. */
  budgetBytes: number;
  /** Smaller batches are ranked by FTS5 as they are (a few milliseconds): not worth an index. */
  minRows: number;
  /** Rows read between two pauses while an index is built (other queries run in the pauses). @default 200 (~15 ms) */
  rowsPerSlice?: number;
  /** A new index's terms in at least this many rows are recounted after its publication (recount). @default 1000 */
  frequentTermRows?: number;
}

/** A library version's live batch, whose word index is asked for. */
export interface WordIndexTarget {
  libraryId: string;
  version: string;
  batch: number;
}

/** A BM25 ranking asked of the search thread: a library version's live batch, the query's words (one phrase each). */
export interface WordRankRequest extends WordIndexTarget {
  words: string[];
  depth: number;
}

/** What became of an index the server should know about (it logs it): put in place, or too large for the budget. */
export interface WordIndexMade {
  libraryId: string;
  version: string;
  rows: number;
  bytes: number;
  ms: number;
  overBudget?: boolean;
  /** Why the index could not be built (its searches stay with FTS5). */
  failed?: string;
}

export interface WordSearch {
  /** The ranking FTS5 would give, from the batch's word index; undefined when there is none yet (one is built). */
  rank(request: WordRankRequest): WordRanking[] | undefined;
  /**
   * Build the batch's index now, before its first search: at the server's start for large libraries, and for a
   * large batch written but not yet published (the ingestion publishes it once this resolves: it goes live warm).
   * Resolves when the index is in place, or was given up (too small, over the budget, failed: onIndex says).
   */
  warm(batch: WordIndexTarget): Promise<void>;
  /**
   * Count again the IDFs of the terms searched most recently (up to RECOUNTED_TERMS) and of the most frequent terms
   * of the indexes built since the last recount, one term at a time between which other queries are answered: the
   * counts are forgotten when FTS5's structure changes, and a publication and its purge change it, so the first
   * searches after a publication would each count their words again (a frequent one, ~12 ms at 100,000 rows).
   */
  recount(): Promise<void>;
  /** Drop the indexes of batches no longer written or served (a replaced batch, just after its successor's publication). */
  dropRetired(): void;
  /** Resolves when no index is being built (tests wait for it). */
  settled(): Promise<void>;
  /** How many terms' table-wide counts were read from FTS5 so far, by searches and recounts (tests watch it). */
  readonly termCounts: number;
  close(): void;
}

/** Query words whose index terms are remembered (a word's term never changes: the tokenizer is the table's). */
const REMEMBERED_WORDS = 10_000;
/** Recently searched terms recounted after a publication. */
const RECOUNTED_TERMS = 300;
/**
 * A new index's terms recounted after its publication: the most frequent, down to this many rows. Counting a term
 * walks its rows (~12 ms at 100,000 rows, 0.4 ms at 3,000): a query's rarer words are counted at once at its search.
 */
const FREQUENT_TERMS = 300;
const FREQUENT_TERM_ROWS = 1000;
const SWEEP_MS = 60_000;

/**
 * BM25 for the search thread from in-memory word indexes (word-index.ts) of large live batches, with the scores
 * and order FTS5's bm25() gives. A batch's rows never change while it is live, so its index stays good until the
 * batch is replaced; the table-wide numbers are read from FTS5 at each query. Until an index is built (in the
 * background, in slices), and for a query word FTS5 reads as several tokens (a phrase), callers rank with FTS5.
 */
export function createWordSearch(file: string, options: WordSearchOptions, onIndex: (made: WordIndexMade) => void = () => {}): WordSearch {
  // Not mapped: SQLite unmaps a connection's whole map at its first read after any other connection's write, and
  // this one's (every page the IDF counts read) took 8-15 ms to unmap, paid by the first search after a job
  // finished. Its reads are small (a batch's record, a term's row count): read() costs them nothing worth the map.
  const db = openReader(file, false);
  const tokenize = tokenizerOf(db, "snippets_fts");
  const tokenizer = new FtsTokenizer(db, tokenize, COLUMN_WEIGHTS.length);
  const statistics = ftsStatisticsReader(db);
  const indexes = new Map<string, WordIndex>();
  /** Batches being indexed, or found not worth one (too small, too large). */
  const settled = new Set<string>();
  const wordTerms = new Map<string, string | undefined>();
  /** The frequent terms of indexes built since the last recount (their batch's publication comes before it). */
  let newFrequentTerms: string[] = [];
  let building: Promise<void> = Promise.resolve();
  const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

  const keyOf = (libraryId: string, version: string, batch: number) => {
    // A batch being written counts as well as the live one: its index is built before its publication. Rows from
    // before batches existed are batch 0, with no record while no batch was ever published.
    const startedAt = servableBatchStart(db, libraryId, version, batch) ?? (batch === 0 && !liveBatchRecord(db, libraryId, version) ? "" : undefined);
    // Keyed by the batch's start too: a batch number can be handed out again once its rows are all gone.
    return startedAt === undefined ? undefined : JSON.stringify([libraryId, version, batch, startedAt]);
  };
  // A library refreshed leaves its old batch's index behind, unused: dropped once that batch is retired (the
  // ingestion asks at once, dropRetired; this sweep catches the rest).
  const sweep = () => {
    for (const key of [...indexes.keys(), ...settled]) {
      const [libraryId, version, batch] = JSON.parse(key) as [string, string, number];
      if (keyOf(libraryId, version, batch) === key) continue;
      indexes.delete(key);
      settled.delete(key);
    }
  };
  const sweeper = setInterval(sweep, SWEEP_MS);
  sweeper.unref();

  const termsOf = (words: string[]): string[] | undefined => {
    const unknown = words.filter((word) => !wordTerms.has(word));
    if (wordTerms.size + unknown.length > REMEMBERED_WORDS) wordTerms.clear();
    tokenizer.termsOfWords(unknown).forEach((terms, i) => wordTerms.set(unknown[i]!, terms.length === 1 ? terms[0] : undefined));
    const terms = words.map((word) => wordTerms.get(word));
    // A word FTS5 reads as a phrase of several tokens (or none) is matched by position, which the index lacks.
    return terms.every((term) => term !== undefined) ? (terms as string[]) : undefined;
  };

  const buildLater = (key: string, request: WordIndexTarget) => {
    if (settled.has(key) || options.budgetBytes <= 0) return;
    settled.add(key);
    building = building
      .then(async () => {
        sweep();
        // Retired while it waited its turn (a search of the replaced batch just before the swap asked for it).
        if (!settled.has(key)) return;
        const made = await build(file, tokenize, request, options, pause);
        if (!made) return;
        // Retired while it was built: kept, it would only push a live batch's index out of the budget.
        if (keyOf(request.libraryId, request.version, request.batch) !== key) return;
        if ("index" in made) {
          indexes.set(key, made.index);
          // The newest index's first: at a server's start, many are built and none is published.
          newFrequentTerms = [...new Set([...made.index.frequentTerms(FREQUENT_TERMS, options.frequentTermRows ?? FREQUENT_TERM_ROWS), ...newFrequentTerms])].slice(0, FREQUENT_TERMS);
          let total = [...indexes.values()].reduce((sum, index) => sum + index.bytes, 0);
          // Least recently searched first (a Map keeps insertion order; a search moves its index to the end). One
          // that leaves is built again at its batch's next search.
          for (const [name, index] of indexes) {
            if (total <= options.budgetBytes || name === key) break;
            indexes.delete(name);
            settled.delete(name);
            total -= index.bytes;
          }
        }
        onIndex(made.report);
        collectBuildGarbage();
      })
      .catch((err: Error) => onIndex({ libraryId: request.libraryId, version: request.version, rows: 0, bytes: 0, ms: 0, failed: err.message }));
  };

  return {
    rank(request) {
      const key = keyOf(request.libraryId, request.version, request.batch);
      if (key === undefined) return undefined;
      const index = indexes.get(key);
      if (!index) {
        buildLater(key, request);
        return undefined;
      }
      indexes.delete(key);
      indexes.set(key, index);
      const terms = termsOf(request.words);
      if (!terms) return undefined;
      const { averageSize, idfs } = statistics.read(terms);
      return index.rank(
        terms.map((term, i) => ({ term, idf: idfs[i]! })),
        averageSize,
        request.depth,
      );
    },
    warm(target) {
      const key = keyOf(target.libraryId, target.version, target.batch);
      if (key === undefined || indexes.has(key)) return Promise.resolve();
      buildLater(key, target);
      // The queue's end: this batch's build, or the one already on its way (or given up).
      return building;
    },
    dropRetired: sweep,
    recount() {
      // On the index-building queue (one job at a time), so that an index built meanwhile adds its terms first.
      building = building
        .then(async () => {
          // The most recently learnt words' terms (a Map keeps insertion order), and the new indexes' frequent ones.
          const recent = [...wordTerms.values()].filter((term) => term !== undefined).slice(-RECOUNTED_TERMS);
          const terms = [...new Set([...newFrequentTerms, ...recent])];
          newFrequentTerms = [];
          // One term a turn: a frequent term's count is a few milliseconds, and queries wait for no more.
          for (const term of terms) {
            statistics.read([term]);
            await pause();
          }
        })
        .catch(() => {});
      return building;
    },
    settled: () => building,
    get termCounts() {
      return statistics.counted;
    },
    close() {
      clearInterval(sweeper);
      db.close();
    },
  };
}

/** Build a batch's index from one read transaction on a connection of its own (queries go on meanwhile). */
async function build(
  file: string,
  tokenize: string,
  { libraryId, version, batch }: WordIndexTarget,
  options: WordSearchOptions,
  pause: () => Promise<void>,
): Promise<{ index: WordIndex; report: WordIndexMade } | { report: WordIndexMade } | undefined> {
  const started = performance.now();
  // Each page is read once: mapping the file would only add it to the thread's resident memory.
  const db = openReader(file, false);
  try {
    db.exec("BEGIN");
    const rows = db.prepare("SELECT count(*) FROM snippets INDEXED BY snippets_by_batch WHERE library_id = ? AND version = ? AND batch = ?").pluck().get(libraryId, version, batch) as number;
    if (rows < options.minRows) return undefined;
    // In id order through snippets_owner (id, library_id, version, batch): other libraries' rows are skipped there.
    const chunk = db
      .prepare(
        `SELECT s.id, s.title, s.description, s.content, d.sz FROM snippets s INDEXED BY snippets_owner LEFT JOIN snippets_fts_docsize d ON d.id = s.id
         WHERE s.id > ? AND s.library_id = ? AND s.version = ? AND s.batch = ? ORDER BY s.id LIMIT ?`,
      )
      .raw();
    const builder = new WordIndexBuilder(new FtsTokenizer(db, tokenize, COLUMN_WEIGHTS.length), COLUMN_WEIGHTS);
    const report = () => ({ libraryId, version, rows: builder.count, bytes: builder.bytes, ms: Math.round(performance.now() - started) });
    for (let after = -1; ;) {
      const read = chunk.all(after, libraryId, version, batch, options.rowsPerSlice ?? 200) as Array<[number, string | null, string | null, string | null, Buffer | null]>;
      if (read.length === 0) break;
      builder.add(read.map(([id, title, description, content, sizes]) => ({ id, columns: [title, description, content], sizes: sizes ? readVarints(sizes) : [0, 0, 0] })));
      after = read.at(-1)![0];
      if (builder.bytes > options.budgetBytes) return { report: { ...report(), overBudget: true } };
      await pause();
    }
    const index = builder.finish();
    return { index, report: { ...report(), bytes: index.bytes } };
  } finally {
    db.close();
  }
}

function openReader(file: string, mapped = true): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  if (mapped) db.pragma(`mmap_size = ${MMAP_BYTES}`);
  return db;
}

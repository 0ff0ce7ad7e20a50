import type Database from "better-sqlite3";

/**
 * The table-wide numbers FTS5's bm25() ranks with, read from the full-text index itself, so that a ranking computed
 * elsewhere (word-index.ts) scores exactly as FTS5 does: the number of rows, the average row size in tokens (all
 * columns together), and each phrase's inverse document frequency over every row of the table. They change with any
 * write to the index, by anyone; a word's count is remembered only until the index's structure record changes
 * (every write, flush or merge rewrites it).
 */
export interface FtsStatistics {
  rows: number;
  averageSize: number;
  /** FTS5's IDF of each index term asked for, in order, as a one-term phrase: ln((N - n + 0.5) / (n + 0.5)), never below 1e-6. */
  idfs: number[];
}

/** The averages record (FTS5's %_data row 1): the row count, then each column's total token count, as varints. */
const AVERAGES_ID = 1;
/** The structure record (row 10): the index's segments; a new one after every change to the index. */
const STRUCTURE_ID = 10;

/**
 * Reads the statistics for a ranking of index `terms` (a query's words as FTS5's tokenizer turns them into terms,
 * one phrase each: word-search.ts), so that each IDF is the one FTS5 computes for that query. A term's count n is
 * read from fts5vocab's row table (the rows that have the term, which is what FTS5 counts for a one-term phrase)
 * and kept until the index's structure changes; reading it walks every row that has the term (~12 ms for a term
 * of 100,000 rows), which is why counts are kept, and recounted ahead of queries after a change (word-search.ts).
 */
export interface FtsStatisticsReader {
  read(terms: string[]): FtsStatistics;
  /** How many term counts were read from FTS5 so far (the others were remembered). */
  readonly counted: number;
}

export function ftsStatisticsReader(db: Database.Database, table = "snippets_fts"): FtsStatisticsReader {
  const record = db.prepare(`SELECT block FROM ${table}_data WHERE id = ?`).pluck();
  // In the connection's temp schema: nothing is written to the file, so a read-only connection can have it.
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${table}_term_rows USING fts5vocab(main, ${table}, row)`);
  const rowsWith = db.prepare(`SELECT doc FROM temp.${table}_term_rows WHERE term = ?`).pluck();
  // SQLite's own ln(), the C library's log() that FTS5 calls: JavaScript's Math.log may differ in the last bit.
  const logarithm = db.prepare("SELECT ln(?)").pluck();
  let structure: Buffer | undefined;
  let remembered = new Map<string, number>();
  let counted = 0;
  const read = (terms: string[]): FtsStatistics => {
    // One read transaction: the counts, the row total and the structure are of the same moment.
    const outer = db.inTransaction;
    if (!outer) db.exec("BEGIN");
    try {
      const current = (record.get(STRUCTURE_ID) as Buffer | undefined) ?? Buffer.alloc(0);
      if (!structure || !current.equals(structure)) {
        structure = current;
        remembered = new Map();
      }
      const averages = record.get(AVERAGES_ID) as Buffer | undefined;
      const [rows = 0, ...columnTotals] = averages ? readVarints(averages) : [];
      const averageSize = columnTotals.reduce((sum, n) => sum + n, 0) / rows;
      const idfs = terms.map((term) => {
        let idf = remembered.get(term);
        if (idf === undefined) {
          const hits = (rowsWith.get(term) as number | undefined) ?? 0;
          counted++;
          idf = logarithm.get((rows - hits + 0.5) / (hits + 0.5)) as number;
          if (!(idf > 0)) idf = 1e-6;
          remembered.set(term, idf);
        }
        return idf;
      });
      return { rows, averageSize, idfs };
    } finally {
      if (!outer) db.exec("COMMIT");
    }
  };
  return {
    read,
    get counted() {
      return counted;
    },
  };
}

/** SQLite's variable-length integers (1-9 bytes, big-endian groups of 7 bits; the 9th byte gives 8). */
export function readVarints(bytes: Uint8Array): number[] {
  const values: number[] = [];
  let at = 0;
  while (at < bytes.length) {
    let value = 0;
    let i = 0;
    for (; i < 8 && at < bytes.length; i++) {
      const byte = bytes[at++]!;
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    if (i === 8 && at < bytes.length) value = value * 256 + bytes[at++]!;
    values.push(value);
  }
  return values;
}

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
  /** FTS5's IDF of each word asked for, in order, as a phrase: ln((N - n + 0.5) / (n + 0.5)), never below 1e-6. */
  idfs: number[];
}

/** The averages record (FTS5's %_data row 1): the row count, then each column's total token count, as varints. */
const AVERAGES_ID = 1;
/** The structure record (row 10): the index's segments; a new one after every change to the index. */
const STRUCTURE_ID = 10;

/**
 * Reads the statistics for a ranking of `words`: a query's words as its MATCH expression quotes them, each one
 * phrase (search/query-terms.ts), so each is tokenized and counted exactly as FTS5 does it for that query.
 */
export function ftsStatisticsReader(db: Database.Database, table = "snippets_fts"): (words: string[]) => FtsStatistics {
  const record = db.prepare(`SELECT block FROM ${table}_data WHERE id = ?`).pluck();
  const matches = db.prepare(`SELECT count(*) FROM ${table} WHERE ${table} MATCH ?`).pluck();
  // SQLite's own ln(), the C library's log() that FTS5 calls: JavaScript's Math.log may differ in the last bit.
  const logarithm = db.prepare("SELECT ln(?)").pluck();
  let structure: Buffer | undefined;
  let remembered = new Map<string, number>();
  return (words) => {
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
      const idfs = words.map((word) => {
        let idf = remembered.get(word);
        if (idf === undefined) {
          const hits = matches.get(`"${word.replace(/"/g, '""')}"`) as number;
          idf = logarithm.get((rows - hits + 0.5) / (hits + 0.5)) as number;
          if (!(idf > 0)) idf = 1e-6;
          remembered.set(word, idf);
        }
        return idf;
      });
      return { rows, averageSize, idfs };
    } finally {
      if (!outer) db.exec("COMMIT");
    }
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

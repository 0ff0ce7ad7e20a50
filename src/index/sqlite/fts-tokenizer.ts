import type Database from "better-sqlite3";

/** unicode61's token characters by default (categories L*, N* and Co); every other character separates tokens. */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;

/**
 * A text's tokens as FTS5's unicode61 tokenizer cuts them, before case folding, diacritics and stemming. SQLite's
 * character tables are of an older Unicode than JavaScript's, so a rare character may be cut differently: callers
 * compare the count with the one FTS5 stored (snippets_fts_docsize) and ask FtsTokenizer for that row instead.
 */
export function surfaceTokens(text: string | null): string[] {
  return text ? (text.match(TOKEN) ?? []) : [];
}

/** The tokenize option of an FTS5 table, as its CREATE statement gives it ('porter unicode61' for snippets_fts). */
export function tokenizerOf(db: Database.Database, table: string): string {
  const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").pluck().get(table) as string | undefined) ?? "";
  return /tokenize\s*=\s*'((?:[^']|'')*)'/i.exec(sql)?.[1]?.replace(/''/g, "'") ?? "unicode61";
}

/**
 * FTS5's own tokenizer (case folding, diacritics, the porter stemmer), asked through contentless tables in the
 * connection's temp schema: text goes in, the index terms come out of an fts5vocab table. Nothing is written to
 * the database file, so a read-only connection can use it. Every call leaves the tables empty.
 */
export class FtsTokenizer {
  private readonly insertWord: Database.Statement;
  private readonly wordTerms: Database.Statement;
  private readonly insertRow: Database.Statement;
  private readonly rowTerms: Database.Statement;
  /** The row table's column names, c0, c1, …: a term's column is its position here. */
  private readonly names: string[];

  constructor(
    private readonly db: Database.Database,
    tokenize: string,
    readonly columns: number,
  ) {
    const option = `tokenize='${tokenize.replace(/'/g, "''")}'`;
    const names = (this.names = Array.from({ length: columns }, (_, i) => `c${i}`));
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.lds_tokenize_words USING fts5(w, ${option}, content='')`);
    db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lds_tokenize_words_terms USING fts5vocab(temp, lds_tokenize_words, instance)");
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.lds_tokenize_row${columns} USING fts5(${names.join(", ")}, ${option}, content='')`);
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.lds_tokenize_row${columns}_terms USING fts5vocab(temp, lds_tokenize_row${columns}, instance)`);
    this.insertWord = db.prepare("INSERT INTO temp.lds_tokenize_words (rowid, w) VALUES (?, ?)");
    this.wordTerms = db.prepare("SELECT term, doc FROM temp.lds_tokenize_words_terms").raw();
    this.insertRow = db.prepare(`INSERT INTO temp.lds_tokenize_row${columns} (rowid, ${names.join(", ")}) VALUES (1, ${names.map(() => "?").join(", ")})`);
    this.rowTerms = db.prepare(`SELECT term, col FROM temp.lds_tokenize_row${columns}_terms`).raw();
  }

  /** Each word's index terms, in the words' order: one for a word FTS5 reads as one token. */
  termsOfWords(words: string[]): string[][] {
    const terms = words.map((): string[] => []);
    if (words.length === 0) return terms;
    this.db.transaction(() => {
      words.forEach((word, i) => this.insertWord.run(i + 1, word));
      for (const [term, doc] of this.wordTerms.iterate() as IterableIterator<[string, number]>) terms[doc - 1]!.push(term);
      this.db.exec("INSERT INTO temp.lds_tokenize_words (lds_tokenize_words) VALUES ('delete-all')");
    })();
    return terms;
  }

  /** A row's index terms, each with its column's position, one per token. */
  termsOfRow(values: Array<string | null>): Array<{ term: string; column: number }> {
    return this.db.transaction(() => {
      this.insertRow.run(...values);
      const terms = (this.rowTerms.all() as Array<[string, string]>).map(([term, col]) => ({ term, column: this.names.indexOf(col) }));
      this.db.exec(`INSERT INTO temp.lds_tokenize_row${this.columns} (lds_tokenize_row${this.columns}) VALUES ('delete-all')`);
      return terms;
    })();
  }
}

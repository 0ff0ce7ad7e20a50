import { surfaceTokens, type FtsTokenizer } from "./fts-tokenizer.js";
import { WordIndex, type Frequencies } from "./word-index.js";

/** A row of the full-text index as the builder reads it: its columns and the token counts FTS5 stored for them. */
export interface IndexedRow {
  id: number;
  columns: Array<string | null>;
  /** Tokens per column, from snippets_fts_docsize. */
  sizes: number[];
}

/**
 * Builds a WordIndex from rows given in ascending id order, a chunk at a time. Words are cut in JavaScript and
 * mapped to their index terms by FTS5's own tokenizer once per distinct word; a row whose token counts differ from
 * the ones FTS5 stored (a character SQLite's Unicode tables read differently) is tokenized whole by FTS5 instead.
 * Pairs are kept as (term, frequency) per row, in fixed blocks (no copy as they grow), until finish() sorts them by
 * term, freeing each block once it is read: at most 8 bytes per pair while building plus the index's 5.
 */
/** Pairs per block of the builder's log: 2^20 (8 MiB a block, terms and frequencies). */
const BLOCK_BITS = 20;
const BLOCK_MASK = (1 << BLOCK_BITS) - 1;

export class WordIndexBuilder {
  private ids = new Int32Array(1024);
  private sizes = new Float64Array(1024);
  private rowEnds = new Int32Array(1024);
  private readonly termBlocks: Array<Int32Array | undefined> = [];
  private readonly frequencyBlocks: Array<Float32Array | undefined> = [];
  private largestFrequency = 0;
  private wholeFrequencies = true;
  private rowCount = 0;
  private pairCount = 0;
  private readonly terms = new Map<string, number>();
  private readonly termRows: number[] = [];
  /** The current row's frequency per term number, and the terms it has so far. */
  private rowFrequency = new Float64Array(4096);
  private readonly rowTerms: number[] = [];
  /** A word as cut in JavaScript → its term number, or -1 when FTS5 does not read it as one token. */
  private readonly wordTerms = new Map<string, number>();

  constructor(
    private readonly tokenizer: FtsTokenizer,
    private readonly weights: number[],
  ) {}

  get count(): number {
    return this.rowCount;
  }

  /**
   * Memory the finished index will hold, roughly (as WordIndex.bytes counts it, with one byte per frequency, the
   * usual case). While it is built, each pair takes 8 bytes instead of 5.
   */
  get bytes(): number {
    return this.rowCount * 24 + this.pairCount * (4 + this.frequencyBytes()) + this.terms.size * 68;
  }

  /** Bytes per frequency in the finished index: the smallest array that holds every one exactly. */
  private frequencyBytes(): 1 | 2 | 4 {
    if (!this.wholeFrequencies || this.largestFrequency > 0xffff) return 4;
    return this.largestFrequency > 0xff ? 2 : 1;
  }

  add(rows: IndexedRow[]): void {
    // Each word becomes its term number in one lookup; a word not seen before gets a placeholder (-2 - its place in
    // `unknown`) until FTS5's tokenizer has given the chunk's new words their terms, all in one call.
    const unknown: string[] = [];
    const pending = new Map<string, number>();
    const coded = rows.map((row) =>
      row.columns.map((text) => {
        const words = surfaceTokens(text);
        const codes = new Int32Array(words.length);
        words.forEach((word, i) => {
          let code = this.wordTerms.get(word);
          if (code === undefined) {
            code = pending.get(word);
            if (code === undefined) pending.set(word, (code = -2 - unknown.push(word) + 1));
          }
          codes[i] = code;
        });
        return codes;
      }),
    );
    const resolved = this.tokenizer.termsOfWords(unknown).map((terms) => (terms.length === 1 ? this.termNumber(terms[0]!) : -1));
    unknown.forEach((word, i) => this.wordTerms.set(word, resolved[i]!));
    rows.forEach((row, i) => {
      const columns = coded[i]!;
      for (const codes of columns) for (let k = 0; k < codes.length; k++) if (codes[k]! <= -2) codes[k] = resolved[-2 - codes[k]!]!;
      const asStored = columns.every((codes, c) => codes.length === (row.sizes[c] ?? 0) && codes.every((code) => code >= 0));
      if (asStored) {
        columns.forEach((codes, c) => codes.forEach((term) => this.countToken(term, this.weights[c]!)));
      } else {
        const exact = this.tokenizer.termsOfRow(row.columns);
        const counts = row.sizes.map((_, c) => exact.filter((t) => t.column === c).length);
        if (counts.some((n, c) => n !== row.sizes[c])) throw new Error(`snippet ${row.id}'s full-text entry does not match its text (the index is being rebuilt?)`);
        for (const { term, column } of exact) this.countToken(this.termNumber(term), this.weights[column]!);
      }
      this.addRow(
        row.id,
        row.sizes.reduce((sum, n) => sum + n, 0),
      );
    });
  }

  finish(): WordIndex {
    const offsets = new Int32Array(this.terms.size + 1);
    for (let t = 0; t < this.terms.size; t++) offsets[t + 1] = offsets[t]! + this.termRows[t]!;
    const rows = new Int32Array(this.pairCount);
    const width = this.frequencyBytes();
    const frequencies: Frequencies = width === 1 ? new Uint8Array(this.pairCount) : width === 2 ? new Uint16Array(this.pairCount) : new Float32Array(this.pairCount);
    const next = offsets.slice(0, this.terms.size);
    // Rows were added in order, so each term's rows come out ascending.
    for (let row = 0, pair = 0; row < this.rowCount; row++) {
      for (; pair < this.rowEnds[row]!; pair++) {
        const block = pair >>> BLOCK_BITS;
        const at = next[this.termBlocks[block]![pair & BLOCK_MASK]!]!++;
        rows[at] = row;
        frequencies[at] = this.frequencyBlocks[block]![pair & BLOCK_MASK]!;
        if ((pair & BLOCK_MASK) === BLOCK_MASK) this.termBlocks[block] = this.frequencyBlocks[block] = undefined;
      }
    }
    this.termBlocks.length = this.frequencyBlocks.length = 0;
    return new WordIndex(this.ids.slice(0, this.rowCount), this.sizes.slice(0, this.rowCount), this.terms, offsets, rows, frequencies);
  }

  private termNumber(term: string): number {
    let t = this.terms.get(term);
    if (t === undefined) {
      t = this.terms.size;
      this.terms.set(term, t);
      this.termRows.push(0);
    }
    return t;
  }

  /** Add a token of `term` to the current row's frequencies (dense per term: no map per row). */
  private countToken(term: number, weight: number): void {
    if (term >= this.rowFrequency.length) {
      this.rowFrequency = grown(this.rowFrequency, term + 1);
    }
    if (this.rowFrequency[term] === 0) this.rowTerms.push(term);
    this.rowFrequency[term]! += weight;
  }

  /** Close the current row: its (term, frequency) pairs are appended, and the per-term counts cleared. */
  private addRow(id: number, size: number): void {
    if (this.rowCount === this.ids.length) {
      this.ids = grown(this.ids);
      this.sizes = grown(this.sizes);
      this.rowEnds = grown(this.rowEnds);
    }
    for (const term of this.rowTerms) {
      const block = this.pairCount >>> BLOCK_BITS;
      if (block === this.termBlocks.length) {
        this.termBlocks.push(new Int32Array(1 << BLOCK_BITS));
        this.frequencyBlocks.push(new Float32Array(1 << BLOCK_BITS));
      }
      const f = this.rowFrequency[term]!;
      if (f > this.largestFrequency) this.largestFrequency = f;
      if (!Number.isInteger(f)) this.wholeFrequencies = false;
      this.termBlocks[block]![this.pairCount & BLOCK_MASK] = term;
      this.frequencyBlocks[block]![this.pairCount++ & BLOCK_MASK] = f;
      this.rowFrequency[term] = 0;
      this.termRows[term]!++;
    }
    this.rowTerms.length = 0;
    this.ids[this.rowCount] = id;
    this.sizes[this.rowCount] = size;
    this.rowEnds[this.rowCount++] = this.pairCount;
  }
}

/** A copy of the array at least twice as long (and at least `atLeast`). */
function grown<T extends Int32Array | Float64Array>(array: T, atLeast = 0): T {
  const bigger = new (array.constructor as new (n: number) => T)(Math.max(array.length * 2, atLeast));
  bigger.set(array);
  return bigger;
}

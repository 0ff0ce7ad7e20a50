/** FTS5's bm25() constants (k1, b): the ranking below must compute exactly what bm25() does. */
const K1 = 1.2;
const B = 0.75;

export interface WordRanking {
  id: number;
  score: number;
}

/** A phrase of a query: its index term (undefined when no row has it) and its IDF over the whole table. */
export interface RankedPhrase {
  term: string | undefined;
  idf: number;
}

/** Weighted frequencies: whole numbers (the weights are) and small, so mostly one byte each. */
export type Frequencies = Uint8Array | Uint16Array | Float32Array;

/**
 * An inverted index of one snippet batch in memory, for BM25 without FTS5's per-row cost: FTS5 calls bm25() for
 * every matching row (tens of thousands for a question of common words), where this adds one precomputed number
 * per (word, row) pair. It holds per term the rows that have it and the row's weighted frequency (the sum of its
 * columns' weights over the term's tokens, as bm25() counts it), and per row its size; the table-wide numbers
 * (IDF, average size) are FTS5's own at query time (fts-statistics.ts), so scores are bm25()'s to the last bit.
 */
export class WordIndex {
  private scores?: Float64Array;
  private touched?: Int32Array;

  constructor(
    /** Snippet ids, ascending: a row's number is its place here. */
    readonly ids: Int32Array,
    /** Each row's size in tokens, every column together (bm25()'s D). */
    private readonly sizes: Float64Array,
    private readonly terms: Map<string, number>,
    /** Term t's postings are offsets[t] .. offsets[t + 1] of rows and frequencies. */
    private readonly offsets: Int32Array,
    private readonly rows: Int32Array,
    private readonly frequencies: Frequencies,
  ) {}

  get count(): number {
    return this.ids.length;
  }

  /**
   * The terms most rows have, most first, down to `minRows` rows: the ones whose table-wide count (an IDF) is
   * costly to read from FTS5, since the count walks every row that has the term.
   */
  frequentTerms(limit: number, minRows: number): string[] {
    const frequent: Array<[string, number]> = [];
    for (const [term, t] of this.terms) {
      const rows = this.offsets[t + 1]! - this.offsets[t]!;
      if (rows >= minRows) frequent.push([term, rows]);
    }
    return frequent
      .sort((x, y) => y[1] - x[1])
      .slice(0, limit)
      .map(([term]) => term);
  }

  /** Memory held, roughly: the arrays, a ranking's scratch (12 bytes a row), and the terms at ~64 bytes each. */
  get bytes(): number {
    return this.ids.byteLength + this.sizes.byteLength + this.count * 12 + this.offsets.byteLength + this.rows.byteLength + this.frequencies.byteLength + this.terms.size * 64;
  }

  /**
   * The `limit` best rows for the phrases, as FTS5's `ORDER BY bm25() LIMIT` gives them (ties: lower id first).
   * Each score is bm25()'s sum over the phrases, in their order, of idf * f(k1 + 1) / (f + k1(1 - b + b D / avgdl)).
   */
  rank(phrases: RankedPhrase[], averageSize: number, limit: number): WordRanking[] {
    const scores = (this.scores ??= new Float64Array(this.count));
    const touched = (this.touched ??= new Int32Array(this.count));
    let reached = 0;
    for (const { term, idf } of phrases) {
      const t = term === undefined ? undefined : this.terms.get(term);
      if (t === undefined) continue;
      for (let j = this.offsets[t]!, end = this.offsets[t + 1]!; j < end; j++) {
        const row = this.rows[j]!;
        const f = this.frequencies[j]!;
        // Every term is positive (idf >= 1e-6, f > 0): a zero score is a row not reached yet.
        if (scores[row] === 0) touched[reached++] = row;
        scores[row]! += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * this.sizes[row]!) / averageSize)));
      }
    }
    const best = bestRows(scores, touched, reached, limit);
    const ranked = best.map((row) => ({ id: this.ids[row]!, score: scores[row]! }));
    for (let i = 0; i < reached; i++) scores[touched[i]!] = 0;
    return ranked;
  }
}

/** The `limit` best of the reached rows, best first (higher score, then lower row): a bounded heap, worst on top. */
function bestRows(scores: Float64Array, touched: Int32Array, reached: number, limit: number): number[] {
  const heap: number[] = [];
  const worse = (a: number, b: number) => scores[a]! < scores[b]! || (scores[a] === scores[b] && a > b);
  const siftDown = (from: number) => {
    for (let i = from; ;) {
      const l = 2 * i + 1,
        r = l + 1;
      let least = i;
      if (l < heap.length && worse(heap[l]!, heap[least]!)) least = l;
      if (r < heap.length && worse(heap[r]!, heap[least]!)) least = r;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least]!, heap[i]!];
      i = least;
    }
  };
  for (let k = 0; k < reached && limit > 0; k++) {
    const row = touched[k]!;
    if (heap.length < limit) {
      heap.push(row);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (worse(heap[0]!, row)) {
      heap[0] = row;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => scores[b]! - scores[a]! || a - b);
}

import { meaningfulWords } from "../text/stop-words.js";

const MAX_TERMS = 32;

/** The distinct, meaningful words of a query, lower-cased (all of them when every word is a stop word). */
export function queryTerms(query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])];
  return meaningfulWords(words).slice(0, MAX_TERMS);
}

/**
 * An FTS5 expression matching any of the terms. Each term is a quoted string, so no user input is ever read as
 * FTS5 syntax (operators, column filters, NEAR): a query cannot fail to parse or widen itself.
 */
export function ftsExpression(terms: string[]): string | null {
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

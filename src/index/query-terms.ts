import { meaningfulWords } from "../text/stop-words.js";

const MAX_TERMS = 32;

/**
 * The distinct, meaningful words of a query, lower-cased (all of them when every word is a stop word): what the
 * search index ranks (index/search-index.ts). Each engine turns them into its own query; none reads them as syntax.
 */
export function queryTerms(query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])];
  return meaningfulWords(words).slice(0, MAX_TERMS);
}

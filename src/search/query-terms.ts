/**
 * Words that carry no meaning for ranking. Without them a question such as "how do I add a route" matches on
 * "route" (and "add") rather than on every snippet that contains "a".
 */
const STOP_WORDS = new Set(
  ("a an and are as at be by can do does for from how i if in into is it me my of on or should so that the their then there " +
    "these this to use using was we what when where which who why will with you your").split(" "),
);

const MAX_TERMS = 32;

/** The distinct, meaningful words of a query, lower-cased (all of them when every word is a stop word). */
export function queryTerms(query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])];
  const meaningful = words.filter((w) => !STOP_WORDS.has(w));
  return (meaningful.length ? meaningful : words).slice(0, MAX_TERMS);
}

/**
 * An FTS5 expression matching any of the terms. Each term is a quoted string, so no user input is ever read as
 * FTS5 syntax (operators, column filters, NEAR): a query cannot fail to parse or widen itself.
 */
export function ftsExpression(terms: string[]): string | null {
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

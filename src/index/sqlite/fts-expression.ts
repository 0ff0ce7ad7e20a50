/**
 * An FTS5 expression matching any of the terms (index/query-terms.ts). Each term is a quoted string, so no user
 * input is ever read as FTS5 syntax (operators, column filters, NEAR): a query cannot fail to parse or widen itself.
 */
export function ftsExpression(terms: string[]): string | null {
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

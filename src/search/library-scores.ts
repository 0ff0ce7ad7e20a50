/**
 * The scores a search result carries for clients of the hosted service (its MCP server and CLI label trustScore
 * High ≥ 7, Medium ≥ 4, else Low, and show benchmarkScore when above 0). LDS computes them only from what it
 * knows itself, so that each means something checkable (docs/api.md, "Scores"):
 * - trustScore (0–10): how current and healthy the library's source is: 10 for one fetched in the last 30 days
 *   whose last processing succeeded; one point less per further 30 days since its last fetch (at most five), four
 *   less when its last processing failed (it serves older snippets), one less without a description.
 * - benchmarkScore (0–100): how much documentation it holds, 25 points per tenfold of its snippets (10 → 26,
 *   100 → 50, 1,000 → 75, 10,000 or more → 100).
 * - stars: -1, "unknown" to those clients: LDS does not ask git hosts for popularity.
 */
export interface LibraryScores {
  trustScore: number;
  benchmarkScore: number;
  stars: number;
}

const DAY_MS = 86_400_000;

export function libraryScores(input: { lastFetched: string; failed: boolean; hasDescription: boolean; totalSnippets: number }, now = Date.now()): LibraryScores {
  const ageDays = Math.max(0, (now - Date.parse(input.lastFetched)) / DAY_MS);
  let trust = 10 - Math.min(5, Math.floor(ageDays / 30));
  if (input.failed) trust -= 4;
  if (!input.hasDescription) trust -= 1;
  return {
    trustScore: Math.max(0, trust),
    benchmarkScore: Math.min(100, Math.round(25 * Math.log10(1 + input.totalSnippets))),
    stars: -1,
  };
}

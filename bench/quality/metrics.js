// The retrieval metrics of the external quality benchmark (issue 35), on PAGES: a ranking of snippets becomes a
// ranking of the documentation files they come from, and questions are graded per page (qrels: 3 = the page that
// answers, 2 = a page that substantially helps, 1 = related).
// Decisions, written down so that every later run means the same thing:
// - "The right page" (MRR, Hit@k) is a page graded 3. A question may have more than one; the first found counts.
// - MRR is over the whole ranking LDS returns (rank-snippets' depth of 100 snippets, as pages), 0 when no page graded
//   3 is in it.
// - Recall@5 is the fraction of the pages graded 2 or 3 that are among the first 5 pages.
// - nDCG@5 uses every grade: gain 2^g - 1, discount log2(rank + 1), divided by the DCG of the ideal order of the qrels.

export const K = 5;
export const METRICS = ["mrr", "hit1", "hit5", "recall5", "ndcg5"];

/**
 * Pages in the order their first snippet appears: a snippet's source path up to '#' (the section's anchor).
 * @param {string[]} sourcePaths
 * @returns {string[]}
 */
export function pagesOf(sourcePaths) {
  const pages = [];
  const seen = new Set();
  for (const source of sourcePaths) {
    const page = source.split("#")[0];
    if (seen.has(page)) continue;
    seen.add(page);
    pages.push(page);
  }
  return pages;
}

/** @param {string[]} pages @param {Record<string, number>} qrels */
export function reciprocalRank(pages, qrels) {
  const rank = pages.findIndex((p) => qrels[p] === 3);
  return rank < 0 ? 0 : 1 / (rank + 1);
}

/** @param {string[]} pages @param {Record<string, number>} qrels @param {number} k */
export function hitAt(pages, qrels, k) {
  return pages.slice(0, k).some((p) => qrels[p] === 3) ? 1 : 0;
}

/** @param {string[]} pages @param {Record<string, number>} qrels @param {number} k */
export function recallAt(pages, qrels, k) {
  const wanted = Object.keys(qrels).filter((p) => qrels[p] >= 2);
  if (wanted.length === 0) return 0;
  const top = new Set(pages.slice(0, k));
  return wanted.filter((p) => top.has(p)).length / wanted.length;
}

/** @param {number[]} grades in rank order */
function dcg(grades) {
  return grades.reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
}

/** @param {string[]} pages @param {Record<string, number>} qrels @param {number} k */
export function ndcgAt(pages, qrels, k) {
  const ideal = dcg(
    Object.values(qrels)
      .sort((a, b) => b - a)
      .slice(0, k),
  );
  return ideal === 0 ? 0 : dcg(pages.slice(0, k).map((p) => qrels[p] ?? 0)) / ideal;
}

/**
 * Every metric of one question's ranked pages.
 * @param {string[]} pages
 * @param {Record<string, number>} qrels
 * @returns {Record<string, number>}
 */
export function scoreQuestion(pages, qrels) {
  return {
    mrr: reciprocalRank(pages, qrels),
    hit1: hitAt(pages, qrels, 1),
    hit5: hitAt(pages, qrels, K),
    recall5: recallAt(pages, qrels, K),
    ndcg5: ndcgAt(pages, qrels, K),
  };
}

/**
 * The mean of each metric over a group of questions' scores.
 * @param {Array<Record<string, number>>} scores
 * @returns {Record<string, number> & { n: number }}
 */
export function mean(scores) {
  const out = { n: scores.length };
  for (const m of METRICS) out[m] = scores.length ? scores.reduce((s, x) => s + x[m], 0) / scores.length : 0;
  return out;
}

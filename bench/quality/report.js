// The tables of the external quality benchmark: means of every metric per half and ranking method, then the same
// per project and per kind of question, and the questions the fused ranking missed.
import { mean } from "./metrics.js";
import { HALVES } from "./split.js";
import { METHODS } from "./score.js";

const f = (x) => x.toFixed(2);
const HEADER = "| n | MRR | Hit@1 | Hit@5 | Recall@5 | nDCG@5 |";
const cells = (m) => `| ${m.n} | ${f(m.mrr)} | ${f(m.hit1)} | ${f(m.hit5)} | ${f(m.recall5)} | ${f(m.ndcg5)} |`;

/**
 * Means of the records grouped by `by` (a field, or null for all), each half and each method.
 * @param {Array<object>} records from score.js
 * @param {string | null} by
 */
export function table(records, by) {
  const groups = by ? [...new Set(records.map((r) => r[by]))] : [null];
  const lines = [`| ${by ?? "questions"} | half | ranking ${HEADER}`, `|---|---|---${"|---".repeat(6)}|`];
  for (const group of groups) {
    for (const half of HALVES) {
      for (const method of METHODS) {
        const scores = records.filter((r) => (by ? r[by] === group : true) && r.half === half && r.method === method).map((r) => r.scores);
        lines.push(`| ${group ?? "all"} | ${half} | ${method} ${cells(mean(scores))}`);
      }
    }
  }
  return lines.join("\n");
}

/**
 * The questions whose right page (graded 3) is not among the first five pages of `method`, with what came instead.
 * @param {Array<object>} records
 * @param {string} method
 */
export function misses(records, method = "fused") {
  return records
    .filter((r) => r.method === method && r.scores.hit5 === 0)
    .map((r) => {
      const right = r.pages.findIndex((p) => r.qrels[p] === 3);
      return `- ${r.id} (${r.half}, ${r.kind}) "${r.question}": right page at ${right < 0 ? "—" : right + 1}; top: ${r.sources.slice(0, 3).join(", ")}`;
    })
    .join("\n");
}

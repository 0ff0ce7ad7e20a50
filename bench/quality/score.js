// Ask every question of the benchmark with each ranking method and score the pages it returns (metrics.js).
// The modules are passed in, as in bench/lib/evaluate.js, so that the benchmark runs the built code in dist/.
import { pagesOf, scoreQuestion } from "./metrics.js";
import { splitHalves } from "./split.js";

export const METHODS = ["bm25", "vector", "fused"];

/**
 * One record per question and method: its half, the ranked pages and the scores.
 * @param {{ rankSnippets: Function, sourcePathOf: (id: number) => string }} modules
 * @param {object} volume an open volume (dist/volume/open-volume.js) holding the libraries
 * @param {Array<{id: string, project: string, kind: string, question: string, qrels: Record<string, number>}>} questions
 * @param {Record<string, string>} libraryOf project → library id
 */
export async function scoreQuestions({ rankSnippets, sourcePathOf }, volume, questions, libraryOf) {
  const half = splitHalves(questions);
  const records = [];
  for (const method of METHODS) {
    for (const q of questions) {
      const ids = await rankSnippets(volume, { libraryId: libraryOf[q.project], version: "" }, q.question, method);
      const sources = ids.map(sourcePathOf);
      const pages = pagesOf(sources);
      records.push({
        id: q.id,
        project: q.project,
        kind: q.kind,
        half: half.get(q.id),
        method,
        question: q.question,
        qrels: q.qrels,
        pages,
        sources: sources.slice(0, 5),
        scores: scoreQuestion(pages, q.qrels),
      });
    }
  }
  return records;
}

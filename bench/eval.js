// npm run bench -- --only eval   (or: node bench/eval.js)
// Retrieval quality: hit@1 / hit@5 of BM25 alone, vectors alone and the fused ranking, on the question set the
// ranking was built with (fixtures/docs) and on a held-out one about other libraries (fixtures/docs-heldout).
// Target (issue 17): fused ≥ BM25 at hit@1 and at hit@5, on both sets.
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate, METHODS, SETS } from "./lib/evaluate.js";
import { openVolume } from "../dist/volume/open-volume.js";
import { sqliteDatabaseOf } from "../dist/engine/sqlite/open-databases.js";
import { collectDocuments } from "../dist/indexing/collect.js";
import { parseDocuments } from "../dist/indexing/parse-documents.js";
import { replaceLibrarySnippets } from "../dist/indexing/replace-snippets.js";
import { rankSnippets } from "../dist/search/rank-snippets.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pct = (x) => `${(x * 100).toFixed(1)}%`;

export async function runEval() {
  const reports = {};
  for (const [name, set] of Object.entries(SETS)) {
    const volumeDir = path.join(ROOT, "bench", ".work", `eval-volume-${name}`);
    const report = await evaluate({ openVolume, sqliteDatabaseOf, collectDocuments, parseDocuments, replaceLibrarySnippets, rankSnippets }, ROOT, volumeDir, set);
    reports[name] = report;
    console.log(`\nRetrieval quality, ${name} set (${report.questions} questions over fixtures/${set}, ${os.cpus().length} cpus)`);
    console.log("| ranking | hit@1 | hit@5 |\n|---|---|---|");
    for (const method of METHODS) console.log(`| ${method} | ${pct(report.results[method].hit1)} | ${pct(report.results[method].hit5)} |`);
    const { bm25, fused } = report.results;
    const ok = fused.hit1 >= bm25.hit1 && fused.hit5 >= bm25.hit5;
    console.log(`fused vs BM25: hit@1 ${pct(fused.hit1)} vs ${pct(bm25.hit1)}, hit@5 ${pct(fused.hit5)} vs ${pct(bm25.hit5)}; target fused ≥ BM25 on both: ${ok ? "met" : "NOT met"}`);
    for (const method of METHODS) if (report.misses[method].length) console.log(`missed by ${method} (top 5): ${report.misses[method].join(" | ")}`);
  }
  return reports;
}

if (import.meta.url === `file://${process.argv[1]}`) await runEval();

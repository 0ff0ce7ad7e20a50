// npm run bench -- --only eval   (or: node bench/eval.js)
// Retrieval quality: hit@1 / hit@5 of BM25 alone, vectors alone and the fused ranking on the fixture eval set.
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate, METHODS } from "./lib/evaluate.js";
import { openVolume } from "../dist/volume/open-volume.js";
import { collectDocuments } from "../dist/indexing/collect.js";
import { parseDocuments } from "../dist/indexing/parse-documents.js";
import { replaceLibrarySnippets } from "../dist/indexing/replace-snippets.js";
import { rankSnippets } from "../dist/search/rank-snippets.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export async function runEval() {
  const volumeDir = path.join(ROOT, "bench", ".work", "eval-volume");
  const report = await evaluate({ openVolume, collectDocuments, parseDocuments, replaceLibrarySnippets, rankSnippets }, ROOT, volumeDir);
  console.log(`\nRetrieval quality (${report.questions} questions over fixtures/docs, ${os.cpus().length} cpus)`);
  console.log("| ranking | hit@1 | hit@5 |\n|---|---|---|");
  for (const method of METHODS) {
    const r = report.results[method];
    console.log(`| ${method} | ${(r.hit1 * 100).toFixed(1)}% | ${(r.hit5 * 100).toFixed(1)}% |`);
  }
  for (const method of METHODS) if (report.misses[method].length) console.log(`missed by ${method} (top 5): ${report.misses[method].join(" | ")}`);
  return report;
}

if (import.meta.url === `file://${process.argv[1]}`) await runEval();

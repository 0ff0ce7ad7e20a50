// npm run bench -- --only quality   (or: node bench/quality.js)
// External retrieval quality (issue 35): the documentation folders that fastify, pino, undici, mercurius and piscina
// publish in their npm packages, ingested through `lds ingest git`, and 88 questions written from those docs with
// graded pages (bench/quality/questions.json). MRR, Hit@1, Hit@5, Recall@5 and nDCG@5 of BM25 alone, vectors alone
// and the fused ranking, on the tuning half and on the held-out half (bench/quality/split.js), per project and per
// kind of question. The held-out half is never tuned on: change the ranking looking at the tuning half only.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ingestCorpus } from "./quality/ingest-corpus.js";
import { misses, table } from "./quality/report.js";
import { scoreQuestions } from "./quality/score.js";
import { openVolume } from "../dist/volume/open-volume.js";
import { sqliteDatabaseOf } from "../dist/engine/sqlite/open-databases.js";
import { rankSnippets } from "../dist/search/rank-snippets.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const work = path.join(here, ".work", "quality");

export async function runQuality() {
  const { questions } = JSON.parse(fs.readFileSync(path.join(here, "quality", "questions.json"), "utf8"));
  const dataDir = path.join(work, "volume");
  fs.rmSync(dataDir, { recursive: true, force: true });
  const libraries = await ingestCorpus(root, dataDir);
  // A qrel naming a file the pinned docs do not have is a stale question set (or a wrong pin), not a miss.
  for (const q of questions) {
    const files = new Set(libraries.find((l) => l.project === q.project)?.files);
    for (const page of Object.keys(q.qrels)) if (!files.has(page)) throw new Error(`${q.id}: ${page} is not in the ${q.project} docs`);
  }
  const volume = await openVolume(dataDir);
  let records;
  try {
    const sourcePath = sqliteDatabaseOf(volume.store).prepare("SELECT source_path FROM snippets WHERE id = ?").pluck();
    const libraryOf = Object.fromEntries(libraries.map((l) => [l.project, l.libraryId]));
    records = await scoreQuestions({ rankSnippets, sourcePathOf: (id) => sourcePath.get(id) }, volume, questions, libraryOf);
  } finally {
    volume.close();
  }
  fs.writeFileSync(path.join(work, "records.json"), JSON.stringify(records, null, 1));

  console.log(`\n## External retrieval quality (bench/quality, ${questions.length} questions, ${os.cpus().length} cpus)\n`);
  console.log("| project | docs files | snippets | ingestion (s) | peak RSS (MiB) |\n|---|---|---|---|---|");
  for (const l of libraries) console.log(`| ${l.project} | ${l.files.length} | ${l.snippets} | ${l.seconds.toFixed(1)} | ${l.rssMiB.toFixed(0)} |`);
  console.log(`\n${table(records, null)}\n\nPer project:\n\n${table(records, "project")}\n\nPer kind of question:\n\n${table(records, "kind")}`);
  console.log(`\nRight page not in the fused top 5:\n${misses(records, "fused")}`);
  console.log(`\n(every question's ranking: ${path.relative(root, path.join(work, "records.json"))})`);
  return records;
}

if (import.meta.url === `file://${process.argv[1]}`) await runQuality();

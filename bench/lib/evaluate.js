// Retrieval quality on the fixture libraries: hit@1 and hit@5 of each ranking method over fixtures/docs/eval.json.
// The modules are passed in, so that the benchmark (built code in dist/) and the test (sources) share this one file.
import fs from "node:fs";
import path from "node:path";

export const METHODS = ["bm25", "vector", "fused"];

/** The question sets: the one the ranking was built with, and a held-out one about other libraries. */
export const SETS = { tuning: "docs", heldOut: "docs-heldout" };

/**
 * Index every library of fixtures/<set> into a fresh volume at `volumeDir` as /eval/<name>, then ask each question
 * of its eval.json with each method. A hit@k is a question whose answering section (path#anchor) is among the first
 * k snippets.
 */
export async function evaluate(modules, root, volumeDir, set = SETS.tuning) {
  const { openVolume, sqliteDatabaseOf, collectDocuments, parseDocuments, replaceLibrarySnippets, rankSnippets } = modules;
  const docs = path.join(root, "fixtures", set);
  const { questions } = JSON.parse(fs.readFileSync(path.join(docs, "eval.json"), "utf8"));
  fs.rmSync(volumeDir, { recursive: true, force: true });
  const volume = await openVolume(volumeDir);
  const db = sqliteDatabaseOf(volume.store);
  try {
    for (const name of fs.readdirSync(docs).filter((n) => fs.statSync(path.join(docs, n)).isDirectory())) {
      const dir = path.join(docs, name);
      db.prepare("INSERT INTO libraries (id, title, source, state) VALUES (?, ?, 'git', 'finalized')").run(`/eval/${name}`, name);
      await replaceLibrarySnippets(volume, `/eval/${name}`, parseDocuments(dir, collectDocuments(dir)));
    }
    const sourceOf = db.prepare("SELECT source_path FROM snippets WHERE id = ?").pluck();
    const results = {};
    const misses = {};
    for (const method of METHODS) {
      let hit1 = 0;
      let hit5 = 0;
      misses[method] = [];
      for (const q of questions) {
        const ids = await rankSnippets(volume, { libraryId: `/eval/${q.library}`, version: "" }, q.question, method);
        const sources = ids.slice(0, 5).map((id) => sourceOf.get(id));
        if (sources[0] === q.answer) hit1++;
        if (sources.includes(q.answer)) hit5++;
        else misses[method].push(q.question);
      }
      results[method] = { hit1: hit1 / questions.length, hit5: hit5 / questions.length };
    }
    return { questions: questions.length, results, misses };
  } finally {
    volume.close();
  }
}

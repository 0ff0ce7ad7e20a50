// Ingestion of a repository with 2,000 Markdown files (about 40 MB) served by real git over HTTP: snippets per
// second and peak RSS of `lds ingest git`, then a refresh with nothing changed, which must cost under 5% of it.
// Usage: node bench/ingest.js [--files 2000] [--runs 3]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg, fresh, measureAsync, median } from "./lib/measure.js";
import { startGitHttpServer } from "./lib/git-http-server.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const files = Number(arg("files", "2000"));
const runs = Number(arg("runs", "3"));
const WORDS = "widget gadget render value size colour row column grid install configure option client server request response cache token queue job library snippet index search vector embed parse archive backup restore".split(" ");

/** ~20 KB of Markdown: sections of prose and fenced code, deterministic. */
function document(n) {
  let seed = n * 7919;
  const word = () => WORDS[(seed = (seed * 1103515245 + 12345) % 2147483648) % WORDS.length];
  const sentence = () => Array.from({ length: 14 }, word).join(" ") + ".";
  const parts = [`# Guide ${n}`, ""];
  for (let s = 0; s < 30; s++) {
    parts.push(`## Section ${s} of guide ${n}`, "", Array.from({ length: 6 }, sentence).join(" "), "", "```js", `const w${s} = new Widget({ size: ${s}, guide: ${n} });`, `w${s}.render("${word()}");`, "```", "");
  }
  return parts.join("\n");
}

const git = await startGitHttpServer("unused");
try {
  const tree = {};
  for (let i = 0; i < files; i++) tree[`docs/part-${Math.floor(i / 100)}/guide-${i}.md`] = document(i);
  const bytes = Object.values(tree).reduce((s, t) => s + t.length, 0);
  process.stderr.write(`Creating a repository of ${files} files (${(bytes / 1048576).toFixed(1)} MiB)…\n`);
  const repo = await git.createRepo("public", "bench", "docs", tree);
  const host = new URL(git.base).host;
  // Async: the git server answers from this very process.
  const ingest = (dataDir) => measureAsync(["node", path.join(root, "bin/lds.js"), "ingest", "git", repo.url, "--data-dir", dataDir, "--allow-http-host", host, "--json"]);

  const first = [];
  const again = [];
  for (let i = 0; i < runs; i++) {
    const dataDir = fresh(path.join(here, ".work", "ingest-volume"));
    const run = await ingest(dataDir);
    first.push({ ...run, result: JSON.parse(run.stdout) });
    const unchanged = await ingest(dataDir);
    if (!JSON.parse(unchanged.stdout).unchanged) throw new Error("the second run was expected to find nothing changed");
    again.push(unchanged);
  }
  const seconds = median(first.map((r) => r.seconds));
  const snippets = first[0].result.snippets;
  const refresh = median(again.map((r) => r.seconds));
  console.log(`\n## Ingestion: ${files} Markdown files, ${(bytes / 1048576).toFixed(1)} MiB, median of ${runs}\n`);
  console.log("| operation | seconds | snippets | snippets/s | peak RSS (MiB) |");
  console.log("|---|---|---|---|---|");
  console.log(`| first ingestion (clone, parse, embed, store) | ${seconds.toFixed(2)} | ${snippets} | ${(snippets / seconds).toFixed(0)} | ${Math.max(...first.map((r) => r.rssMiB)).toFixed(0)} |`);
  console.log(`| refresh with nothing changed (git ls-remote) | ${refresh.toFixed(2)} | 0 | | ${Math.max(...again.map((r) => r.rssMiB)).toFixed(0)} |`);
  console.log(`| unchanged refresh / first ingestion (target < 5%) | ${((refresh / seconds) * 100).toFixed(1)}% | | | |`);
} finally {
  await git.close();
}

// Ingestion of a repository of Markdown files (2,000 files, about 40 MB, and the same doubled) served by real git
// over HTTP: snippets per second and peak RSS of `lds ingest git` (target < 200 MiB, flat when the repository
// doubles), then a refresh with nothing changed, which must cost under 5% of it.
// Usage: node bench/ingest.js [--files 2000,4000] [--runs 3] [--lds OTHER/bin/lds.js]  (another build, to compare)
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg, fresh, measureAsync, median } from "./lib/measure.js";
import { startGitHttpServer } from "./lib/git-http-server.js";
import { documentTree } from "./lib/docs-repo.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const sizes = arg("files", "2000,4000").split(",").map(Number);
const runs = Number(arg("runs", "3"));
const RSS_TARGET_MIB = 200;
const lds = path.resolve(arg("lds", path.join(root, "bin/lds.js")));

const git = await startGitHttpServer("unused");
try {
  const rows = [];
  for (const files of sizes) {
    const tree = documentTree(files);
    const bytes = Object.values(tree).reduce((s, t) => s + t.length, 0);
    process.stderr.write(`Creating a repository of ${files} files (${(bytes / 1048576).toFixed(1)} MiB)…\n`);
    const repo = await git.createRepo("public", "bench", `docs-${files}`, tree);
    const host = new URL(git.base).host;
    // Async: the git server answers from this very process.
    const ingest = (dataDir) => measureAsync(["node", lds, "ingest", "git", repo.url, "--data-dir", dataDir, "--allow-http-host", host, "--json"]);
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
    rows.push({
      files,
      mib: bytes / 1048576,
      seconds: median(first.map((r) => r.seconds)),
      snippets: first[0].result.snippets,
      rss: Math.max(...first.map((r) => r.rssMiB)),
      refresh: median(again.map((r) => r.seconds)),
      refreshRss: Math.max(...again.map((r) => r.rssMiB)),
    });
  }
  console.log(`\n## Ingestion (\`lds ingest git\` over HTTP, ${path.relative(root, lds) || lds}), median of ${runs}, peak RSS the largest\n`);
  console.log("| repository | first ingestion (s) | snippets | snippets/s | peak RSS (MiB) | target | unchanged refresh (s) | refresh / first (target < 5%) |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const ok = r.rss < RSS_TARGET_MIB ? "✅" : "❌";
    const refreshOk = r.refresh / r.seconds < 0.05 ? "✅" : "❌";
    console.log(
      `| ${r.files} files, ${r.mib.toFixed(1)} MiB | ${r.seconds.toFixed(2)} | ${r.snippets} | ${(r.snippets / r.seconds).toFixed(0)} | ${r.rss.toFixed(0)} | < ${RSS_TARGET_MIB} ${ok} | ${r.refresh.toFixed(2)} | ${((r.refresh / r.seconds) * 100).toFixed(1)}% ${refreshOk} |`,
    );
  }
  if (rows.length > 1) {
    const growth = rows.at(-1).rss / rows[0].rss;
    console.log(`\nPeak RSS ${rows.at(-1).files} files / ${rows[0].files} files: ${growth.toFixed(2)}x (flat: ≤ 1.15x ${growth <= 1.15 ? "✅" : "❌"})`);
  }
} finally {
  await git.close();
}

#!/usr/bin/env node
// `npm run bench`: the archive benchmark (backup, verify, restore against sqlite3, tar and sha256sum) and the S3
// benchmark (backup to moto against a plain upload), API latency during a backup, ingestion (memory, two sizes),
// server responsiveness while a large library is swapped, the first searches after a publication (bench/first-queries.js), search quality and latency (bench/search.js), the external retrieval
// quality on real documentation (bench/quality.js), and `lds serve` on PostgreSQL against SQLite (bench/pg-serve.js). Pass --sizes and --runs through, e.g.
//   npm run bench -- --sizes 1,4 --runs 3
// or run one part alone with --only NAME (a script's name without .js: quality, eval, search, ingest, pg-serve, …):
//   npm run bench -- --only quality
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf("--only");
const only = at >= 0 ? args.splice(at, 2)[1] : undefined;
const scripts = ["run.js", "s3.js", "latency.js", "ingest.js", "swap.js", "first-queries.js", "search.js", "quality.js", "pg-serve.js"];
for (const script of only ? [`${only}.js`] : scripts) {
  const result = spawnSync("node", [path.join(here, script), ...args], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

#!/usr/bin/env node
// `npm run bench`: the archive benchmark (backup, verify, restore against sqlite3, tar and sha256sum) and the S3
// benchmark (backup to moto against a plain upload), API latency during a backup, ingestion (memory, two sizes),
// server responsiveness while a large library is swapped, the first searches after a publication (bench/first-queries.js), and search quality and latency (bench/search.js). Pass --sizes and --runs through, e.g.
//   npm run bench -- --sizes 1,4 --runs 3
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
for (const script of ["run.js", "s3.js", "latency.js", "ingest.js", "swap.js", "first-queries.js", "search.js"]) {
  const result = spawnSync("node", [path.join(here, script), ...process.argv.slice(2)], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

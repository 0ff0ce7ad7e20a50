// Server responsiveness while it ingests and swaps a large library: one `lds serve`, a repository of 4,000 Markdown
// files (120,000 snippets) submitted through the admin API, then a new commit refreshed, so that 120,000 new
// snippets replace 120,000 served ones. One client asks GET /api/health back to back the whole time; its
// latencies are compared with the same client against the idle server. Target: no request waits > 100 ms.
// Usage: node bench/swap.js [--files 4000] [--idle-seconds 5] [--lds OTHER/bin/lds.js]  (another build, to compare)
//   --disk-writer: another process writes 1 GiB files to the same disk the whole time (bench/lib/disk-writer.js)
//   --loop-gaps: the server times its own event loop too (bench/lib/loop-gaps.js): a wait the client saw is then
//   told apart from a pause of the server's event loop
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg, fresh } from "./lib/measure.js";
import { percentile, startServer } from "./lib/start-server.js";
import { startGitHttpServer } from "./lib/git-http-server.js";
import { documentTree } from "./lib/docs-repo.js";
import { adminSession } from "./lib/admin-session.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const files = Number(arg("files", "4000"));
const lds = arg("lds", undefined);
const idleSeconds = Number(arg("idle-seconds", "5"));
const password = "benchmark passphrase";
const TARGET_MS = 100;
const diskWriter = process.argv.includes("--disk-writer");
const loopGapsFile = process.argv.includes("--loop-gaps") ? path.join(here, ".work", "swap-loop-gaps.json") : undefined;
if (loopGapsFile) fs.rmSync(loopGapsFile, { force: true });

const git = await startGitHttpServer("unused");
const repo = await git.createRepo("public", "bench", "swap", documentTree(files));
const volume = fresh(path.join(here, ".work", "swap-volume"));
const { url, server } = await startServer(
  volume,
  {
    LDS_ADMIN_PASSWORD: password,
    LDS_ADMIN_USERNAME: "bench",
    LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host,
    ...(process.env.SWAP_PRELOAD ? { NODE_OPTIONS: `--import ${process.env.SWAP_PRELOAD}` } : {}),
    ...(loopGapsFile ? { NODE_OPTIONS: `--import ${path.join(here, "lib", "loop-gaps.js")}`, LDS_BENCH_LOOP_GAPS: loopGapsFile } : {}),
  },
  lds && path.resolve(lds),
);
// Bounded: killed at the end, and stops by itself after 15 minutes.
const writer = diskWriter ? spawn("node", [path.join(here, "lib", "disk-writer.js"), path.join(here, ".work", "disk-writer"), "15"], { stdio: "inherit" }) : undefined;

try {
  const admin = await adminSession(url, "bench", password);
  await admin("POST", "/api/teams", { name: "bench", plan: "enterprise" });
  await admin("POST", "/api/users", { team: "bench", email: "bench@example.test", role: "owner" });

  /** Health requests back to back until `done()` settles; sorted latencies in ms. */
  async function probe(done) {
    let finished = false;
    done.then(
      () => (finished = true),
      () => (finished = true),
    );
    const latencies = [];
    while (!finished) {
      const started = performance.now();
      const response = await fetch(`${url}/api/health`);
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
    }
    await done;
    return latencies.sort((a, b) => a - b);
  }
  const library = async () => (await admin("GET", "/api/libraries")).libraries.find((l) => l.sourceUrl === repo.url);
  /** Resolves when the library is finalized with a commit other than `before`'s snippets; throws when it fails. */
  async function ingested(previousUpdate) {
    for (;;) {
      const lib = await library();
      if (lib?.processing === "failed") throw new Error(`ingestion failed: ${lib.reason}`);
      if (lib?.processing === "finalized" && lib.lastUpdateDate !== previousUpdate) return lib;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const marks = [];
  const mark = (what) => {
    marks.push(`${new Date().toISOString().slice(11, 23)} ${what}`);
    if (process.env.SWAP_PRELOAD) process.stderr.write(`${marks.at(-1)}\n`);
  };
  mark("idle");
  const idle = await probe(new Promise((r) => setTimeout(r, idleSeconds * 1000)));
  mark("first ingestion");
  let started = performance.now();
  await admin("POST", "/api/libraries", { team: "bench", docsRepoUrl: repo.url });
  const firstDone = ingested(undefined);
  const first = await probe(firstDone);
  const firstSeconds = (performance.now() - started) / 1000;
  const lib = await firstDone;

  await repo.commit(documentTree(files, 1));
  mark("refresh");
  started = performance.now();
  await admin("POST", "/api/libraries/refresh", { libraryName: lib.id });
  const swapDone = ingested(lib.lastUpdateDate);
  const swap = await probe(swapDone);
  const swapSeconds = (performance.now() - started) / 1000;
  const swapped = await swapDone;
  mark("done");

  const row = (label, l, seconds) =>
    `| ${label} | ${seconds ? seconds.toFixed(1) : idleSeconds} | ${l.length} | ${percentile(l, 50).toFixed(1)} | ${percentile(l, 99).toFixed(1)} | ${l.at(-1).toFixed(1)} | ${l.filter((x) => x > TARGET_MS).length} |`;
  console.log(
    `\n## Server responsiveness during ingestion (${lds ?? "this build"}; ${files} files; ${swapped.totalSnippets} snippets replaced by as many${diskWriter ? "; another process writing to the disk throughout" : ""})\n`,
  );
  console.log("| GET /api/health, one client back to back | seconds | requests | p50 (ms) | p99 (ms) | max (ms) | requests > 100 ms |");
  console.log("|---|---|---|---|---|---|---|");
  console.log(row("idle server (baseline)", idle));
  console.log(row(`first ingestion (${lib.totalSnippets} snippets)`, first, firstSeconds));
  console.log(row("refresh: new commit, every snippet replaced (the swap)", swap, swapSeconds));
  const worst = Math.max(first.at(-1), swap.at(-1));
  console.log(`\nLongest wait during ingestion: ${worst.toFixed(1)} ms (target < ${TARGET_MS} ms ${worst < TARGET_MS ? "✅" : "❌"}); idle max ${idle.at(-1).toFixed(1)} ms`);
  if (loopGapsFile) {
    await new Promise((r) => setTimeout(r, 1500));
    const gaps = fs.existsSync(loopGapsFile) ? JSON.parse(fs.readFileSync(loopGapsFile, "utf8")) : [];
    const longest = [...gaps].sort((a, b) => b.ms - a.ms).slice(0, 5);
    console.log(`Server's own event loop: ${gaps.length} pauses over 60 ms; longest ${longest.map((g) => `${g.ms} ms at ${g.at}`).join(", ") || "none"} (phases began: ${marks.join(", ")})`);
  }
} finally {
  if (process.env.SWAP_PRELOAD) {
    server.kill("SIGUSR2");
    await new Promise((r) => setTimeout(r, 5000));
  }
  server.kill("SIGTERM");
  writer?.kill("SIGTERM");
  await git.close();
}

// The first searches after a publication: one `lds serve`, a repository of `--files` Markdown files (30 snippets
// each; 3,334 files = 100,000 snippets) submitted through the admin API; as soon as the library is finalized, 300
// sequential GET /v2/context requests, each with a question of its own (the first 20 against the next 280); then a
// new commit refreshed (every snippet replaced, the swap) and 300 more. A small library is ingested and searched
// first, so that the server's own code is warm, as in a server that has answered requests before: what is measured
// is the new batch's warmth. Target (issue 33): the first 20 have the p95 of the next 280 (a new batch's word index
// and vector copy are built before it is published, not at its first searches). A p95 of 20 requests is their
// slowest but one, so the next 280 are also shown as windows of 20, each's p95 taken alike: the spread of a warm
// server's own.
// Usage: node bench/first-queries.js [--files 3334] [--lds OTHER/bin/lds.js]  (another build, to compare)
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg, fresh } from "./lib/measure.js";
import { percentile, startServer } from "./lib/start-server.js";
import { startGitHttpServer } from "./lib/git-http-server.js";
import { documentTree, WORDS } from "./lib/docs-repo.js";
import { adminSession } from "./lib/admin-session.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const files = Number(arg("files", "3334"));
const lds = path.resolve(arg("lds", path.join(here, "..", "bin/lds.js")));
const password = "benchmark passphrase";
const FIRST = 20;
const REQUESTS = 300;
/**
 * The n-th question: three words of bench/lib/docs-repo.js's documents, no two questions alike, so that no request is
 * faster for repeating an earlier one (its terms' pages already read).
 */
const TRIPLES = WORDS.flatMap((a, i) => WORDS.flatMap((b, j) => WORDS.slice(j + 1).map((c) => (i < j ? `${a} ${b} ${c}` : undefined)))).filter(Boolean);
const question = (n) => TRIPLES[(n * 997) % TRIPLES.length];

const git = await startGitHttpServer("unused");
const repo = await git.createRepo("public", "bench", "first", documentTree(files));
const small = await git.createRepo("public", "bench", "small", documentTree(20, 2));
const volume = fresh(path.join(here, ".work", "first-queries-volume"));
const cli = (...args) => {
  const r = spawnSync("node", [lds, ...args, "--data-dir", volume], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
};
cli("teams", "create", "bench", "--plan", "enterprise");
cli("users", "add", "bench@example.test", "--team", "bench", "--role", "owner");
const key = JSON.parse(cli("keys", "create", "--email", "bench@example.test", "--json")).key;
const { url, server } = await startServer(volume, { LDS_ADMIN_PASSWORD: password, LDS_ADMIN_USERNAME: "bench", LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host }, lds);
// The search threads' reports of the copies and word indexes they built (size and time), to print with the rows.
const built = [];
let pending = "";
server.stdout.on("data", (data) => {
  const lines = (pending + data).split("\n");
  pending = lines.pop();
  for (const line of lines) if (/is ready; its/.test(line)) built.push(JSON.parse(line));
});

try {
  const admin = await adminSession(url, "bench", password);
  /** Resolves as soon as the library is finalized with another update than `previousUpdate`; throws when it fails. */
  async function finalized(previousUpdate, of = repo) {
    for (;;) {
      const lib = (await admin("GET", "/api/libraries")).libraries.find((l) => l.sourceUrl === of.url);
      if (lib?.processing === "failed") throw new Error(`ingestion failed: ${lib.reason}`);
      if (lib?.processing === "finalized" && lib.lastUpdateDate !== previousUpdate) return lib;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  /** REQUESTS sequential context requests; their latencies in ms, in the order they were made. */
  let asked = 0;
  async function contextRequests(libraryId) {
    const latencies = [];
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      const response = await fetch(`${url}/v2/context?${new URLSearchParams({ libraryId, query: question(asked++) })}`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`context: ${response.status}`);
      latencies.push(performance.now() - started);
    }
    return latencies;
  }
  const sorted = (values) => [...values].sort((a, b) => a - b);
  const rows = [];
  const measure = async (label, lib, seconds) => {
    const latencies = await contextRequests(lib.id);
    const first = sorted(latencies.slice(0, FIRST));
    const next = sorted(latencies.slice(FIRST));
    // The next 280 as 14 windows of 20 in a row, each's p95 as the first 20's is taken: a p95 of 20 requests is
    // their slowest but one, which a window of a quiet, warm server reaches as well; the windows' spread is the noise.
    const windows = [];
    for (let at = FIRST; at + FIRST <= latencies.length; at += FIRST) windows.push(percentile(sorted(latencies.slice(at, at + FIRST)), 95));
    rows.push({ label: `${label} (${lib.totalSnippets} snippets, ingested in ${seconds.toFixed(0)} s)`, first, next, windows: sorted(windows), order: latencies.slice(0, FIRST) });
  };

  await admin("POST", "/api/libraries", { team: "bench", docsRepoUrl: small.url });
  await contextRequests((await finalized(undefined, small)).id);

  let started = performance.now();
  await admin("POST", "/api/libraries", { team: "bench", docsRepoUrl: repo.url });
  const lib = await finalized(undefined);
  await measure("first ingestion finalized", lib, (performance.now() - started) / 1000);
  await repo.commit(documentTree(files, 1));
  started = performance.now();
  await admin("POST", "/api/libraries/refresh", { libraryName: lib.id });
  const swapped = await finalized(lib.lastUpdateDate);
  await measure("refresh swapped (every snippet replaced)", swapped, (performance.now() - started) / 1000);

  const ms = (sortedValues, p) => percentile(sortedValues, p).toFixed(1);
  console.log(`\n## The first context requests after a publication (${lds}; ${files} files)\n`);
  console.log(
    `| right after | first ${FIRST}: p50 / p95 / max (ms) | next ${REQUESTS - FIRST}: p50 / p95 / max (ms) | p95 first / next | next ${REQUESTS - FIRST} in windows of ${FIRST}: p95 lowest / median / highest (ms) |`,
  );
  console.log("|---|---|---|---|---|");
  for (const { label, first, next, windows } of rows) {
    const ratio = percentile(first, 95) / percentile(next, 95);
    const spread = `${windows[0].toFixed(1)} / ${percentile(windows, 50).toFixed(1)} / ${windows.at(-1).toFixed(1)}`;
    console.log(`| ${label} | ${ms(first, 50)} / ${ms(first, 95)} / ${first.at(-1).toFixed(1)} | ${ms(next, 50)} / ${ms(next, 95)} / ${next.at(-1).toFixed(1)} | ${ratio.toFixed(2)}x | ${spread} |`);
  }
  for (const b of built) console.log(`\n${b.msg.split(";")[0]}: ${b.library}, ${b.vectors ?? b.snippets} snippets, ${b.mib} MiB, built in ${b.seconds} s`);
  for (const { label, order } of rows) console.log(`\n${label}: the first ${FIRST} in order (ms): ${order.map((v) => v.toFixed(0)).join(", ")}`);
} finally {
  server.kill("SIGTERM");
  await git.close();
}

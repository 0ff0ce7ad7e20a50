// `lds serve` on PostgreSQL against SQLite, in one run, on the same corpus and the same load (issue 34, done-when 5):
// 1. ingestion of one repository of --files Markdown files (3,334 files = 100,000 snippets) served by real git over
//    HTTP, submitted through the admin API: snippets/s from submission to finalized, and the server's peak RSS,
//    first into a SQLite server, then into PostgreSQL replica A alone (targets: ≥ 0.7x SQLite's rate, < 200 MiB);
//    then replica B starts on the same database with an empty data directory and is timed until /api/ready;
// 2. GET /v2/context on that library: --requests sequential requests to SQLite and to replica A, in alternating
//    blocks of 50 (targets: p95 ≤ SQLite's + 5 ms and < 40 ms), then 4 concurrent clients against SQLite, one
//    replica and both replicas in turn (the same requests split between them; 2 cores: reported, no target);
// 3. --jobs repositories of one file submitted to both replicas at once (LDS_JOB_CONCURRENCY=2 each): a trigger of
//    this bench records every claim (bench/lib/claim-log.js): duplicates (target 0) and each job's queued→running wait.
// A throwaway PostgreSQL 15 cluster (bench/lib/postgres-cluster.js), fsync on. Usage:
//   npm run bench -- --only pg-serve        or  node bench/pg-serve.js [--files 3334] [--requests 300] [--jobs 200]
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { adminSession } from "./lib/admin-session.js";
import { claimReport, jobsSettled, lastJobId, recordClaims } from "./lib/claim-log.js";
import { contextLoad } from "./lib/context-load.js";
import { documentTree } from "./lib/docs-repo.js";
import { startGitHttpServer } from "./lib/git-http-server.js";
import { arg, fresh } from "./lib/measure.js";
import { peakRssMiB } from "./lib/peak-rss.js";
import { startCluster } from "./lib/postgres-cluster.js";
import { percentile, startServer } from "./lib/start-server.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const files = Number(arg("files", "3334"));
const requests = Number(arg("requests", "300"));
const jobCount = Number(arg("jobs", "200"));
const BLOCK = 50;
const CLIENTS = 4;
const password = "benchmark passphrase";
const work = fresh(path.join(here, ".work", "pg-serve"));
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" / ");
const startedAt = new Date();
const loadAtStart = load();

const cluster = await startCluster();
const admin = new pg.Client({ connectionString: cluster.url("postgres") });
await admin.connect();
await admin.query("CREATE DATABASE lds");
await admin.end();
const databaseUrl = cluster.url("lds");
const keyFile = path.join(work, "secret.key");
fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });

const git = await startGitHttpServer("unused");
const servers = [];
const say = (line) => process.stderr.write(`[pg-serve ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
try {
  say(`creating a repository of ${files} files`);
  const repo = await git.createRepo("public", "bench", "big", documentTree(files));
  const common = {
    LDS_ADMIN_USERNAME: "bench",
    LDS_ADMIN_PASSWORD: password,
    LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host,
    LDS_RATE_LIMIT_ENTERPRISE: "1000000",
    LDS_JOB_CONCURRENCY: "2",
  };
  const sqliteDir = fresh(path.join(work, "sqlite"));
  const [dirA, dirB] = [fresh(path.join(work, "replica-a")), fresh(path.join(work, "replica-b"))];
  const replicaEnv = (dataDir) => ({ ...common, LDS_DATABASE_URL: databaseUrl, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: dataDir });
  /** `lds init`: the first team (enterprise plan, its limit raised above) and an API key. */
  const init = (dataDir, env) => {
    const r = spawnSync("node", [path.join(root, "bin/lds.js"), "init", "--email", "bench@example.test", "--team", "bench", "--plan", "enterprise", "--json", "--data-dir", dataDir], {
      encoding: "utf8",
      env: { ...process.env, ...env },
    });
    if (r.status !== 0) throw new Error(`lds init: ${r.stderr}`);
    return JSON.parse(r.stdout).key;
  };
  /** A server on `dataDir`; its log is kept beside it (`<dataDir>.log`) to see where a run's time went. */
  const serve = async (dataDir, env) => {
    const started = await startServer(dataDir, env);
    started.server.stdout.pipe(fs.createWriteStream(`${dataDir}.log`));
    servers.push(started.server);
    return started;
  };
  const sqliteKey = init(sqliteDir, common);
  const pgKey = init(dirA, replicaEnv(dirA));

  /** Submit the big repository through the admin API; resolves once finalized: seconds, snippets, the server's peak RSS. */
  async function ingest({ url, server }) {
    const session = await adminSession(url, "bench", password);
    const started = performance.now();
    await session("POST", "/api/libraries", { team: "bench", docsRepoUrl: repo.url });
    for (;;) {
      const lib = (await session("GET", "/api/libraries")).libraries.find((l) => l.sourceUrl === repo.url);
      if (lib?.processing === "failed") throw new Error(`ingestion failed: ${lib.reason}`);
      if (lib?.processing === "finalized") return { seconds: (performance.now() - started) / 1000, snippets: lib.totalSnippets, rss: peakRssMiB(server.pid), id: lib.id };
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  say("ingesting into SQLite");
  const sqlite = await serve(sqliteDir, common);
  const sqliteIngest = await ingest(sqlite);
  say(`SQLite: ${sqliteIngest.snippets} snippets in ${sqliteIngest.seconds.toFixed(1)} s; ingesting into PostgreSQL replica A`);
  const a = await serve(dirA, replicaEnv(dirA));
  const pgIngest = await ingest(a);
  say(`PostgreSQL: ${pgIngest.snippets} snippets in ${pgIngest.seconds.toFixed(1)} s; starting replica B`);
  const bStarted = performance.now();
  const b = await serve(dirB, replicaEnv(dirB));
  for (;;) {
    if ((await fetch(`${b.url}/api/ready`)).status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const bReadySeconds = (performance.now() - bStarted) / 1000;
  const libraryId = pgIngest.id;
  if (sqliteIngest.id !== libraryId) throw new Error(`the library ids differ: ${sqliteIngest.id} and ${libraryId}`);

  // Warm-up, not counted: each server's first requests of a library (and B's first of its caught-up batch).
  for (const [url, key] of [
    [sqlite.url, sqliteKey],
    [a.url, pgKey],
    [b.url, pgKey],
  ])
    await contextLoad({ urls: [url], key, libraryId, requests: 30, clients: 1 });

  say("sequential context requests, SQLite and replica A in alternating blocks");
  const sequential = { sqlite: [], pg: [] };
  for (let done = 0; done < requests; done += BLOCK) {
    const n = Math.min(BLOCK, requests - done);
    sequential.sqlite.push(...(await contextLoad({ urls: [sqlite.url], key: sqliteKey, libraryId, requests: n, clients: 1 })).latencies);
    sequential.pg.push(...(await contextLoad({ urls: [a.url], key: pgKey, libraryId, requests: n, clients: 1 })).latencies);
  }
  for (const list of Object.values(sequential)) list.sort((x, y) => x - y);

  say(`${CLIENTS} concurrent clients: SQLite, one replica, two replicas, in two turns`);
  const cases = [
    { label: "SQLite, one server", urls: [sqlite.url], key: sqliteKey },
    { label: "PostgreSQL, one replica (A)", urls: [a.url], key: pgKey },
    { label: "PostgreSQL, two replicas (A and B, requests alternating)", urls: [a.url, b.url], key: pgKey },
  ];
  const concurrent = cases.map(() => ({ latencies: [], seconds: 0 }));
  for (let turn = 0; turn < 2; turn++) {
    for (const [i, c] of cases.entries()) {
      const got = await contextLoad({ urls: c.urls, key: c.key, libraryId, requests, clients: CLIENTS });
      concurrent[i].latencies.push(...got.latencies);
      concurrent[i].seconds += got.seconds;
    }
  }
  for (const c of concurrent) c.latencies.sort((x, y) => x - y);
  sqlite.server.kill("SIGTERM");

  say(`${jobCount} jobs on two replicas`);
  const jobRepos = [];
  for (let i = 0; i < jobCount; i++) jobRepos.push(await git.createRepo("public", "jobs", `lib${i}`, documentTree(1, i + 1)));
  const jobsTable = await recordClaims(databaseUrl);
  const afterId = await lastJobId(databaseUrl, jobsTable);
  const sessions = [await adminSession(a.url, "bench", password), await adminSession(b.url, "bench", password)];
  const jobsStarted = performance.now();
  let next = 0;
  // Four submitters, each job submitted to the replicas in turn: each replica's runner is kicked by its own.
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < jobCount) {
        const i = next++;
        await sessions[i % 2]("POST", "/api/libraries", { team: "bench", docsRepoUrl: jobRepos[i].url });
      }
    }),
  );
  const submittedSeconds = (performance.now() - jobsStarted) / 1000;
  await jobsSettled(databaseUrl, jobsTable);
  const jobsSeconds = (performance.now() - jobsStarted) / 1000;
  const claims = await claimReport(databaseUrl, jobsTable, afterId);

  const ms = (sorted, p) => percentile(sorted, p).toFixed(1);
  const rate = (r) => r.snippets / r.seconds;
  const ratio = rate(pgIngest) / rate(sqliteIngest);
  const ok = (good) => (good ? "✅" : "❌");
  const [sqP95, pgP95] = [percentile(sequential.sqlite, 95), percentile(sequential.pg, 95)];
  console.log(
    `\n## lds serve on PostgreSQL against SQLite (${files} files, ${sqliteIngest.snippets} snippets; ${startedAt.toISOString().slice(0, 16)} UTC; load average ${loadAtStart} at the start, ${load()} at the end)\n`,
  );
  console.log("| measure | SQLite | PostgreSQL | PostgreSQL / SQLite | target |");
  console.log("|---|---|---|---|---|");
  console.log(
    `| ingestion, submitted → finalized (s; snippets/s) | ${sqliteIngest.seconds.toFixed(1)}; ${rate(sqliteIngest).toFixed(0)} | ${pgIngest.seconds.toFixed(1)}; ${rate(pgIngest).toFixed(0)} | ${ratio.toFixed(2)}x | ≥ 0.7x ${ok(ratio >= 0.7)} |`,
  );
  console.log(`| server peak RSS during it (MiB) | ${sqliteIngest.rss.toFixed(0)} | ${pgIngest.rss.toFixed(0)} | | < 200 ${ok(pgIngest.rss < 200)} |`);
  console.log(
    `| context, ${requests} sequential requests: p50 / p95 / max (ms) | ${ms(sequential.sqlite, 50)} / ${ms(sequential.sqlite, 95)} / ${sequential.sqlite.at(-1).toFixed(1)} | ${ms(sequential.pg, 50)} / ${ms(sequential.pg, 95)} / ${sequential.pg.at(-1).toFixed(1)} | p95 ${(pgP95 - sqP95).toFixed(1)} ms more | ≤ SQLite + 5 ms ${ok(pgP95 <= sqP95 + 5)}, < 40 ms ${ok(pgP95 < 40)} |`,
  );
  console.log(`\nReplica B, started after the ingestion with an empty data directory, was ready (its search files caught up) in ${bReadySeconds.toFixed(1)} s.`);
  console.log(`\n| ${CLIENTS} concurrent clients, ${2 * requests} requests | p50 (ms) | p95 (ms) | max (ms) | requests/s |`);
  console.log("|---|---|---|---|---|");
  for (const [i, c] of cases.entries()) {
    const got = concurrent[i];
    console.log(`| ${c.label} | ${ms(got.latencies, 50)} | ${ms(got.latencies, 95)} | ${got.latencies.at(-1).toFixed(1)} | ${(got.latencies.length / got.seconds).toFixed(0)} |`);
  }
  const duplicates = claims.claims - claims.jobs;
  console.log(`\n| ${jobCount} jobs (1 file, ~30 snippets each), 2 replicas × LDS_JOB_CONCURRENCY=2 | value | target |`);
  console.log("|---|---|---|");
  console.log(`| jobs done / failed / other | ${claims.states.done ?? 0} / ${claims.states.failed ?? 0} / ${claims.jobs - (claims.states.done ?? 0) - (claims.states.failed ?? 0)} | all done |`);
  console.log(`| claims beyond one per job (jobs claimed twice; largest attempts) | ${duplicates} (${claims.claimedTwice}; ${claims.maxAttempts}) | 0 ${ok(duplicates === 0)} |`);
  console.log(`| claims per replica runner | ${claims.owners.map((o) => o.n).join(" / ")} | |`);
  console.log(`| queued → running: p50 / p95 / max (ms) | ${ms(claims.waits, 50)} / ${ms(claims.waits, 95)} / ${claims.waits.at(-1).toFixed(0)} | (report) |`);
  console.log(
    `| a runner's job ended → its next claim (${claims.pickUps.length} claims that followed one of its ends): p50 / p95 / max (ms) | ${ms(claims.pickUps, 50)} / ${ms(claims.pickUps, 95)} / ${claims.pickUps.at(-1)?.toFixed(0)} | |`,
  );
  console.log(`| running → done, each job: p50 / p95 / max (ms) | ${ms(claims.runs, 50)} / ${ms(claims.runs, 95)} / ${claims.runs.at(-1).toFixed(0)} | |`);
  console.log(`| submitted in / all settled in (s) | ${submittedSeconds.toFixed(1)} / ${jobsSeconds.toFixed(1)} | |`);

  fs.mkdirSync(path.join(here, "results"), { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  fs.writeFileSync(
    path.join(here, "results", `pg-serve-${stamp}.json`),
    JSON.stringify({ node: process.version, files, requests, jobCount, loadAtStart, loadAtEnd: load(), sqliteIngest, pgIngest, bReadySeconds, sequential, concurrent, claims }, null, 2),
  );
} finally {
  for (const server of servers) server.kill("SIGTERM");
  await git.close();
  cluster.stop();
}

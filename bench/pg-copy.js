// An archive's records with PostgreSQL (issue 34, "Backup and restore: the same archive format"): 100,000 snippets
// (about 1 KB each, in 200 libraries) copied from PostgreSQL into a new lds.db (exportRecords: one snapshot, COPY TO,
// the SQLite inserts and the FTS5 rebuild) and from lds.db into a new PostgreSQL schema (importRecords: COPY FROM,
// identities, ANALYZE), side by side with pg_dump -Fc and pg_restore of the same records, in one run on a throwaway
// cluster. Also timed: reading every table through COPY alone (PostgreSQL's side of an export, parsed, nothing
// written), which says what reading in parallel (pg_export_snapshot) could save at most.
// Then the same through LDS's commands on the same database (bench/lib/pg-commands.js): `lds backup --to DIR` against
// pg_dump -Fc, `lds-restore ARCHIVE --database-url URL --yes` into a fresh database against pg_restore into another,
// --runs turns (medians, peak RSS), with where the commands' time goes (the backup's phases, pg_stat_activity sampled).
// Target (issue 34): ≤ 2x pg_dump/pg_restore, or where the time goes.
// Usage: node bench/pg-copy.js [--snippets 100000] [--runs 3]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { arg, fresh } from "./lib/measure.js";
import { startCluster } from "./lib/postgres-cluster.js";
import { compareCommands } from "./lib/pg-commands.js";
import { openVolume } from "../dist/volume/open-volume.js";
import { sqliteDatabaseOf } from "../dist/engine/sqlite/open-databases.js";
import { exportRecords } from "../dist/engine/postgres/records-export.js";
import { importRecords } from "../dist/engine/postgres/records-import.js";
import { swapInRestoredSchema } from "../dist/engine/postgres/schema-swap.js";
import { CopyTextRows } from "../dist/engine/postgres/copy-text.js";
import { openPool } from "../dist/store/postgres/pool.js";
import { openPostgresStore } from "../dist/store/postgres/postgres-store.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const count = Number(arg("snippets", "100000"));
const runs = Number(arg("runs", "3"));
const work = fresh(path.join(here, ".work", "pg-copy"));
const WORDS = Array.from({ length: 6000 }, (_, i) => ((i * 2654435761) % 4294967296).toString(36).slice(0, 3 + (i % 7)));
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const text = (bytes) => {
  const out = [];
  for (let size = 0; size < bytes;) {
    const word = WORDS[Math.floor(rand() * WORDS.length)];
    out.push(word);
    size += word.length + 1;
  }
  return out.join(" ");
};
const seconds = (since) => (performance.now() - since) / 1000;
const mib = (file) => (fs.statSync(file).size / 2 ** 20).toFixed(0);

// The source: a SQLite volume's lds.db, its snippets in published batches (the full-text index rebuilt once).
const volume = await openVolume(path.join(work, "volume"));
const db = sqliteDatabaseOf(volume.store);
const libraries = 200;
db.transaction(() => {
  for (let i = 0; i < libraries; i++) {
    db.prepare("INSERT INTO libraries (id, title, source, state) VALUES (?, ?, 'git', 'finalized')").run(`/bench/lib${i}`, `Library ${i}`);
    db.prepare("INSERT INTO snippet_batches (library_id, version, batch, state, snippets, tokens) VALUES (?, '', 1, 'live', ?, 0)").run(`/bench/lib${i}`, count / libraries);
  }
})();
const trigger = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'snippets_fts_insert'").pluck().get();
db.exec("DROP TRIGGER snippets_fts_insert");
const addSnippet = db.prepare("INSERT INTO snippets (library_id, kind, title, description, content, source_path, tokens, batch) VALUES (?, 'info', ?, ?, ?, 'docs/page.md', ?, 1)");
db.transaction(() => {
  for (let i = 0; i < count; i++) {
    const content = text(700 + Math.floor(rand() * 600));
    addSnippet.run(`/bench/lib${i % libraries}`, `Snippet ${i}`, text(60), content, Math.round(content.length / 4));
  }
})();
db.prepare("INSERT INTO snippets_fts (snippets_fts) VALUES ('rebuild')").run();
db.exec(trigger);
volume.close();
const source = path.join(work, "volume", "lds.db");

const cluster = await startCluster();
const admin = new pg.Client({ connectionString: cluster.url("postgres") });
await admin.connect();
await admin.query("CREATE DATABASE bench");
await admin.query("CREATE DATABASE bench_restored");
await admin.end();
// The dump of schema public creates it: the restore's database starts without one.
const restoredDb = new pg.Client({ connectionString: cluster.url("bench_restored") });
await restoredDb.connect();
await restoredDb.query("DROP SCHEMA public");
await restoredDb.end();
const pool = openPool({ url: cluster.url("bench") });
await (await openPostgresStore({ pool, url: cluster.url("bench") }, Buffer.alloc(32, 1))).close();
const rows = [];
let commands;
try {
  let since = performance.now();
  const { schema } = await importRecords(source, pool);
  const importSeconds = seconds(since);
  await swapInRestoredSchema(pool, schema);

  since = performance.now();
  const exported = path.join(work, "exported.db");
  await exportRecords(pool, exported);
  const exportSeconds = seconds(since);

  // PostgreSQL's side alone: every table read through COPY and parsed, in one REPEATABLE READ transaction.
  const client = new pg.Client({ connectionString: cluster.url("bench") });
  await client.connect();
  since = performance.now();
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  const tables = (await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows.map((r) => r.tablename);
  for (const table of tables) {
    const parser = new CopyTextRows();
    for await (const chunk of client.query(copyTo(`COPY (SELECT * FROM public.${table}) TO STDOUT`))) parser.push(chunk);
    parser.end();
  }
  await client.query("COMMIT");
  const readSeconds = seconds(since);
  await client.end();

  const dump = path.join(work, "bench.dump");
  const env = { ...process.env, PGPASSWORD: cluster.password };
  const connection = ["-h", cluster.host, "-p", String(cluster.port), "-U", cluster.user];
  since = performance.now();
  execFileSync(path.join(cluster.bin, "pg_dump"), [...connection, "-Fc", "--schema=public", "-f", dump, "bench"], { env });
  const dumpSeconds = seconds(since);
  since = performance.now();
  execFileSync(path.join(cluster.bin, "pg_restore"), [...connection, "-d", "bench_restored", dump], { env });
  const restoreSeconds = seconds(since);

  rows.push(
    ["backup: exportRecords → lds.db", exportSeconds, `${mib(exported)} MiB lds.db`],
    ["  of which PostgreSQL's side (COPY read + parse)", readSeconds, ""],
    ["backup: pg_dump -Fc", dumpSeconds, `${mib(dump)} MiB dump`],
    ["restore: importRecords → new schema", importSeconds, `from ${mib(source)} MiB lds.db`],
    ["restore: pg_restore", restoreSeconds, ""],
  );

  // The commands: the volume's key is the one its records (and so the bench database's) were sealed with.
  const keyFile = path.join(work, "secret.key");
  fs.copyFileSync(path.join(work, "volume", "secret.key"), keyFile);
  fs.chmodSync(keyFile, 0o600);
  commands = await compareCommands({ cluster, database: "bench", keyFile, work, runs });
} finally {
  await pool.end();
  cluster.stop();
}
console.log(`\nRecords copies, ${count.toLocaleString("en")} snippets (PostgreSQL 15, throwaway cluster, 1 run)`);
console.log("| operation | seconds | size |\n|---|---|---|");
for (const [name, s, size] of rows) console.log(`| ${name} | ${s.toFixed(2)} | ${size} |`);
console.log(`export / pg_dump: ${(rows[0][1] / rows[2][1]).toFixed(1)}x; import / pg_restore: ${(rows[3][1] / rows[4][1]).toFixed(1)}x`);

const c = commands;
const f = (n) => n.toFixed(2);
console.log(
  `\nThe commands, ${count.toLocaleString("en")} snippets, ${runs} turns (medians; peak RSS the largest), load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} at the end`,
);
console.log("| command | seconds | peak RSS | size |\n|---|---|---|---|");
console.log(`| lds backup --to DIR | ${f(c.backup.seconds)} | ${c.backup.rssMiB.toFixed(0)} MiB | ${c.archiveMiB.toFixed(0)} MiB archive |`);
console.log(`| pg_dump -Fc | ${f(c.dump.seconds)} | ${c.dump.rssMiB.toFixed(0)} MiB | ${c.dumpMiB.toFixed(0)} MiB dump |`);
console.log(`| lds-restore ARCHIVE --database-url URL --yes (fresh database) | ${f(c.restore.seconds)} | ${c.restore.rssMiB.toFixed(0)} MiB | ${c.restoredSnippets} snippets |`);
console.log(`| lds verify ARCHIVE (the restore's extraction and checks alone; ${f(c.verify.inProcess)} s in the process) | ${f(c.verify.seconds)} | ${c.verify.rssMiB.toFixed(0)} MiB | |`);
console.log(`| pg_restore -d (fresh database, one job) | ${f(c.pgRestore.seconds)} | ${c.pgRestore.rssMiB.toFixed(0)} MiB | |`);
console.log(`lds backup / pg_dump: ${(c.backup.seconds / c.dump.seconds).toFixed(1)}x; lds-restore / pg_restore: ${(c.restore.seconds / c.pgRestore.seconds).toFixed(1)}x (target ≤ 2x)`);
console.log(
  `backup phases (medians): in the process ${f(c.backupPhases.inProcess)} s of ${f(c.backup.seconds)} s (the rest: node's start and exit), snapshot ${f(c.backupPhases.snapshot)} s (records and vectors exported, files hashed), write ${f(c.backupPhases.write)} s (tar to the destination); sampled COPY from ${c.backupCopy.firstCopyAt?.toFixed(1)} s to ${c.backupCopy.lastCopyAt?.toFixed(1)} s`,
);
console.log(
  `restore, sampled (medians): first COPY at ${c.restoreCopy.firstCopyAt?.toFixed(1)} s (start, archive verified and extracted), last COPY at ${c.restoreCopy.lastCopyAt?.toFixed(1)} s, ANALYZE ${f(c.restoreCopy.analyze)} s, other SQL ${f(c.restoreCopy.otherSql)} s`,
);
console.log(
  JSON.stringify({
    backup: c.all.backup.map((s) => ({ seconds: s.seconds, rssMiB: s.rssMiB, phases: s.phases, spans: s.spans })),
    restore: c.all.restore.map((s) => ({ seconds: s.seconds, rssMiB: s.rssMiB, spans: s.spans })),
    dump: c.all.dump.map((s) => s.seconds),
    verify: c.all.verify.map((s) => [s.seconds, s.inProcess]),
    pgRestore: c.all.pgRestore.map((s) => s.seconds),
  }),
);

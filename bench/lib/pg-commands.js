// Backup and restore through LDS's commands (the built CLI, as an operator runs them on PostgreSQL) against
// pg_dump -Fc and pg_restore of the same database, in turns (lds backup, pg_dump, lds-restore, pg_restore; then again)
// so that a busy machine's drift falls on all four alike; `lds verify` of the archive, timed before each restore, is
// the restore's extraction and checks alone. Every restore goes into a database made for it (outside
// the timing) and dropped after. Both restores use one connection: LDS imports on one, pg_restore runs without -j.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { measureAsync, median } from "./measure.js";
import { sampleActivity } from "./pg-activity.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function onAdmin(cluster, statements) {
  const admin = new pg.Client({ connectionString: cluster.url("postgres") });
  await admin.connect();
  try {
    for (const sql of statements) await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A database without a public schema: pg_restore of a dump of schema public creates it. */
async function emptyDatabase(cluster, name) {
  await onAdmin(cluster, [`CREATE DATABASE ${name}`]);
  const client = new pg.Client({ connectionString: cluster.url(name) });
  await client.connect();
  await client.query("DROP SCHEMA public");
  await client.end();
}

/**
 * `runs` turns on `database` of the cluster; `keyFile` is the key its records were sealed with. Answers the medians
 * (seconds), the largest peak RSS (MiB), the backup's phases and the sampled spans of each LDS command (medians).
 */
export async function compareCommands({ cluster, database, keyFile, work, runs }) {
  const dataDir = path.join(work, "lds-data");
  fs.mkdirSync(dataDir, { recursive: true });
  const env = { LDS_DATABASE_URL: cluster.url(database), LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: dataDir };
  const toolsEnv = { PGPASSWORD: cluster.password };
  const connection = ["-h", cluster.host, "-p", String(cluster.port), "-U", cluster.user];
  const samples = { backup: [], dump: [], verify: [], restore: [], pgRestore: [] };
  let archiveMiB = 0;
  let dumpMiB = 0;
  for (let run = 0; run < runs; run++) {
    const to = path.join(work, `backups-${run}`);
    fs.rmSync(to, { recursive: true, force: true });
    fs.mkdirSync(to);
    const backup = await sampleActivity(cluster.url("postgres"), database, measureAsync(["node", path.join(root, "bin/lds.js"), "backup", "--to", to, "--json"], env));
    const backupJson = JSON.parse(backup.result.stdout);
    archiveMiB = backupJson.size / 2 ** 20;
    samples.backup.push({ ...backup.result, phases: { ...backupJson.phases, durationMs: backupJson.durationMs }, spans: backup.spans });

    const dump = path.join(work, `bench-${run}.dump`);
    samples.dump.push(await measureAsync([path.join(cluster.bin, "pg_dump"), ...connection, "-Fc", "--schema=public", "-f", dump, database], toolsEnv));
    dumpMiB = fs.statSync(dump).size / 2 ** 20;

    // The part of a restore that comes before PostgreSQL, alone: the same extraction and checks (extractAndCheck).
    const verify = await measureAsync(["node", path.join(root, "bin/lds.js"), "verify", backupJson.path, "--json"], { LDS_DATA_DIR: dataDir });
    samples.verify.push({ ...verify, inProcess: JSON.parse(verify.stdout).durationMs / 1000 });

    const ldsTarget = `lds_restored_${run}`;
    await onAdmin(cluster, [`CREATE DATABASE ${ldsTarget}`]);
    const restoreArgv = ["node", path.join(root, "bin/lds-restore.js"), backupJson.path, "--database-url", cluster.url(ldsTarget), "--yes", "--json"];
    const restore = await sampleActivity(cluster.url("postgres"), ldsTarget, measureAsync(restoreArgv, { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: dataDir }));
    samples.restore.push({ ...restore.result, spans: restore.spans, snippets: JSON.parse(restore.result.stdout).snippets });

    const pgTarget = `pg_restored_${run}`;
    await emptyDatabase(cluster, pgTarget);
    samples.pgRestore.push(await measureAsync([path.join(cluster.bin, "pg_restore"), ...connection, "-d", pgTarget, dump], toolsEnv));

    await onAdmin(cluster, [`DROP DATABASE ${ldsTarget}`, `DROP DATABASE ${pgTarget}`]);
    fs.rmSync(to, { recursive: true, force: true });
    fs.rmSync(dump, { force: true });
    console.log(
      `turn ${run + 1}/${runs}: backup ${backup.result.seconds}s, pg_dump ${samples.dump.at(-1).seconds}s, verify ${verify.seconds}s, lds-restore ${restore.result.seconds}s, pg_restore ${samples.pgRestore.at(-1).seconds}s`,
    );
  }
  const of = (list) => ({ seconds: median(list.map((s) => s.seconds)), rssMiB: Math.max(...list.map((s) => s.rssMiB)) });
  const med = (list, pick) => median(list.map(pick).filter((v) => v !== null && v !== undefined));
  return {
    backup: of(samples.backup),
    dump: of(samples.dump),
    verify: { ...of(samples.verify), inProcess: med(samples.verify, (s) => s.inProcess) },
    restore: of(samples.restore),
    pgRestore: of(samples.pgRestore),
    archiveMiB,
    dumpMiB,
    restoredSnippets: samples.restore[0].snippets,
    backupPhases: {
      inProcess: med(samples.backup, (s) => s.phases.durationMs / 1000),
      snapshot: med(samples.backup, (s) => s.phases.snapshotMs / 1000),
      write: med(samples.backup, (s) => s.phases.writeMs / 1000),
    },
    backupCopy: { firstCopyAt: med(samples.backup, (s) => s.spans.firstCopyAt), lastCopyAt: med(samples.backup, (s) => s.spans.lastCopyAt) },
    restoreCopy: {
      firstCopyAt: med(samples.restore, (s) => s.spans.firstCopyAt),
      lastCopyAt: med(samples.restore, (s) => s.spans.lastCopyAt),
      analyze: med(samples.restore, (s) => s.spans.perLabel.ANALYZE ?? 0),
      otherSql: med(samples.restore, (s) => s.spans.perLabel["other SQL"] ?? 0),
    },
    all: samples,
  };
}

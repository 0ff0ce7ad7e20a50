import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SERVING_LOCK } from "../../../src/engine/postgres/serving-lock.js";
import { runCli, spawnCli } from "../../helpers/cli.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";
import { ADMIN, eventually, startServer } from "../../helpers/server.js";
import { tempDir, tempDirForFile } from "../../helpers/temp.js";

// Review finding 2: a replica takes its share of the serving lock BEFORE it checks its key against the database, so a
// rotation (or a restore's swap) that commits while the replica starts is seen by that check, never missed.
let postgres: PostgresTestServer;

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => postgres?.stop());

it("a replica starting while a rotation holds the serving lock waits for it, then checks its key against what the rotation recorded (key_missing)", async () => {
  const database = await postgres.newDatabase();
  const keyFile = path.join(tempDirForFile(), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  const dataDir = tempDir("lds-pg-replica-");
  const env = { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: dataDir };
  expect((await runCli("lds", ["teams", "create", "docs"], env)).exitCode).toBe(0);

  // A rotation under way: the serving lock held exclusively by a session that then records another key's fingerprint.
  const rotation = new pg.Client({ connectionString: database.url, application_name: "a rotation" });
  await rotation.connect();
  await rotation.query("SELECT pg_advisory_lock($1)", [SERVING_LOCK]);
  const server = spawnCli("lds", ["serve", "--data-dir", dataDir, "--port", "0"], { ...env, LDS_ADMIN_PASSWORD: ADMIN.password });
  try {
    // The replica waits for its share of the lock.
    await eventually(async () => {
      const { rows } = await rotation.query(
        "SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objid = $1 AND NOT l.granted AND a.application_name LIKE 'lds serve on %'",
        [SERVING_LOCK],
      );
      return rows.length === 1;
    }, 30_000);
    await rotation.query("UPDATE settings SET value = 'fingerprint-of-the-rotated-key' WHERE key = 'secret_key.fingerprint'");
    await rotation.query("SELECT pg_advisory_unlock($1)", [SERVING_LOCK]);
    const result = await server;
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toMatch(/is not the key the database at 127\.0\.0\.1:\d+ was sealed with/);
    expect(result.stdout).not.toContain("LDS is serving");
  } finally {
    server.kill("SIGTERM");
    await rotation.end();
  }
  await database.drop();
}, 90_000);

it("a replica cut off while the key was rotated stops reporting ready and says why in its log", async () => {
  const database = await postgres.newDatabase();
  const keyFile = path.join(tempDirForFile(), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  const dataDir = tempDir("lds-pg-replica-");
  const server = await startServer(dataDir, { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: dataDir });
  const ready = async () => (await fetch(`${server.url}/api/ready`)).status;
  try {
    await eventually(async () => (await ready()) === 200, 30_000);
    await postgres.asSuperuser(database.name, async (c) => {
      // Its held connection cut; a "rotation" takes the serving lock in the gap and records another key.
      await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'lds serve on %'");
      await c.query("SELECT pg_advisory_lock($1)", [SERVING_LOCK]);
      await c.query("UPDATE settings SET value = 'fingerprint-of-the-rotated-key' WHERE key = 'secret_key.fingerprint'");
      await c.query("SELECT pg_advisory_unlock($1)", [SERVING_LOCK]);
    });
    await eventually(async () => (await ready()) === 503, 30_000);
    expect(server.output()).toMatch(/were restored or their shared key rotated while this replica was cut off from the database: it no longer reports ready/);
  } finally {
    await server.stop();
  }
  await database.drop();
}, 90_000);

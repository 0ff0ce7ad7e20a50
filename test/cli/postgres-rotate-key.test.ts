import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKUP_LOCK } from "../../src/engine/postgres/serving-lock.js";
import { saveProviderConfig, usableProvider } from "../../src/oauth/provider-config.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { runCli } from "../helpers/cli.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../helpers/postgres-server.js";
import { startServer } from "../helpers/server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";

// Issue 34, "Key": `lds secrets rotate-key` on PostgreSQL, while no replica serves: every secret re-sealed in one
// transaction, the key file replaced crash-safely, the old key kept.
let postgres: PostgresTestServer;
let database: TestDatabase;

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.newDatabase();
}, 60_000);
afterAll(async () => postgres?.stop());

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

/** Every stored secret of the database, unsealed with `key` (a wrong key or a tampered seal throws). */
async function secretsUnder(key: Buffer): Promise<{ github: string; all: string[] }> {
  const { store, close } = await openPostgresStore({ settings: { url: database.url } }, key);
  try {
    const names = await postgres.asSuperuser(database.name, async (c) => (await c.query<{ name: string }>("SELECT name FROM secrets ORDER BY name")).rows.map((r) => r.name));
    const all: string[] = [];
    for (const name of names) all.push((await store.settings.secret(name))!);
    return { github: (await usableProvider(store, "github")).clientSecret, all };
  } finally {
    await close();
  }
}

describe("lds secrets rotate-key on PostgreSQL (issue 34)", () => {
  it("re-seals a connection's credential and an OAuth provider's secret with a new key, refused while a replica serves; an interrupted rename is finished at the next open", async () => {
    const keyFile = path.join(tempDirForFile(), "secret.key");
    fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const oldKey = fs.readFileSync(keyFile);
    const dataDir = tempDir("lds-pg-rotate-");
    const env = { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: dataDir };
    expect((await runCli("lds", ["teams", "create", "docs"], env)).exitCode).toBe(0);
    const added = await runCli("lds", ["connections", "add-git", "--team", "docs", "--host", "git.example.test"], { ...env, LDS_CONNECTION_TOKEN: "pasted-token-123" });
    expect(added.exitCode, added.stderr).toBe(0);
    {
      const { store, close } = await openPostgresStore({ settings: { url: database.url } }, oldKey);
      await saveProviderConfig(store, "github", { clientId: "client-id", clientSecret: "provider-secret-456" });
      await close();
    }
    const before = await secretsUnder(oldKey);
    expect(before.github).toBe("provider-secret-456");
    expect(before.all).toContain("pasted-token-123");

    // A serving replica holds the serving lock: the rotation is refused naming it, and nothing changes.
    const serveDir = tempDir("lds-pg-replica-");
    const server = await startServer(serveDir, { ...env, LDS_DATA_DIR: serveDir });
    try {
      const refused = await runCli("lds", ["secrets", "rotate-key"], env);
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toMatch(new RegExp(`^Error: Replicas are serving 127\\.0\\.0\\.1:${postgres.port}/${database.name}: lds serve on \\S+ pid \\d+ at 127\\.0\\.0\\.1; the key was not rotated`, "m"));
    } finally {
      await server.stop();
    }
    expect(fs.readFileSync(keyFile).equals(oldKey)).toBe(true);
    expect(fs.readdirSync(path.dirname(keyFile))).toEqual(["secret.key"]);
    expect(await secretsUnder(oldKey)).toEqual(before);

    const rotated = await runCli("lds", ["secrets", "rotate-key", "--json"], env);
    expect(rotated.exitCode, rotated.stderr).toBe(0);
    const result = JSON.parse(rotated.stdout);
    expect(result).toMatchObject({ resealed: 2, shared: { database: `127.0.0.1:${postgres.port}/${database.name}`, keyFile }, oldKeyFile: expect.stringMatching(/\.pre-rotation-\d{8}T\d{6}Z$/) });
    const newKey = fs.readFileSync(keyFile);
    expect(newKey.equals(oldKey)).toBe(false);
    expect(newKey.length).toBe(32);
    expect(modeOf(keyFile)).toBe("600");
    expect(fs.readFileSync(result.oldKeyFile).equals(oldKey)).toBe(true);
    expect(modeOf(result.oldKeyFile)).toBe("600");
    expect(fs.existsSync(`${keyFile}.next`)).toBe(false);
    expect(await secretsUnder(newKey)).toEqual(before);
    const text = await runCli("lds", ["secrets", "rotate-key"], env);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(`Copy ${keyFile} to every replica's LDS_SECRET_KEY_FILE before starting it`);
    const newest = fs.readFileSync(keyFile);

    // A replica with the previous key is refused at start.
    const stale = path.join(tempDirForFile(), "secret.key");
    fs.writeFileSync(stale, newKey, { mode: 0o600 });
    const refused = await runCli("lds", ["teams", "list"], { ...env, LDS_SECRET_KEY_FILE: stale });
    expect(refused.exitCode).toBe(9);
    expect(refused.stderr).toMatch(/is not the key the database at 127\.0\.0\.1:\d+ was sealed with/);

    // Committed, then cut off before the rename: the new key waits as <file>.next, the old one still in place. The
    // next open on this machine puts it in place (its fingerprint is the one the database records).
    fs.renameSync(keyFile, `${keyFile}.next`);
    fs.writeFileSync(keyFile, newKey, { mode: 0o600 });
    const reopened = await runCli("lds", ["teams", "list"], env);
    expect(reopened.exitCode, reopened.stderr).toBe(0);
    expect(fs.readFileSync(keyFile).equals(newest)).toBe(true);
    expect(fs.existsSync(`${keyFile}.next`)).toBe(false);
    // A .next file that is not the database's key (a rotation that never committed) is left alone, the key kept.
    fs.writeFileSync(`${keyFile}.next`, randomBytes(32), { mode: 0o600 });
    expect((await runCli("lds", ["teams", "list"], env)).exitCode).toBe(0);
    expect(fs.readFileSync(keyFile).equals(newest)).toBe(true);
    expect(await secretsUnder(newest)).toEqual(before);
  }, 180_000);

  it("is refused while a backup holds the backups' lock (backup_running naming it): the key file and the secrets unchanged", async () => {
    const own = await postgres.newDatabase();
    const keyFile = path.join(tempDirForFile(), "secret.key");
    fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const oldKey = fs.readFileSync(keyFile);
    const env = { LDS_DATABASE_URL: own.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir("lds-pg-rotate-") };
    expect((await runCli("lds", ["teams", "create", "docs"], env)).exitCode).toBe(0);
    const sealed = async () => (await postgres.asSuperuser(own.name, (c) => c.query("SELECT value FROM settings WHERE key = 'secret_key.fingerprint'"))).rows;
    const before = await sealed();
    const backup = new pg.Client({ connectionString: own.url, application_name: "lds backup, pid 4242 on backup-host" });
    await backup.connect();
    try {
      expect((await backup.query("SELECT pg_try_advisory_lock($1) AS taken", [BACKUP_LOCK])).rows[0].taken).toBe(true);
      const refused = await runCli("lds", ["secrets", "rotate-key"], env);
      expect(refused.exitCode, refused.stderr).toBe(5);
      expect(refused.stderr).toMatch(/^Error: A backup of the database at 127\.0\.0\.1:\d+ is already running \(lds backup, pid 4242 on backup-host.*\)\. The key was not rotated/m);
    } finally {
      await backup.end();
    }
    expect(fs.readFileSync(keyFile).equals(oldKey)).toBe(true);
    expect(fs.readdirSync(path.dirname(keyFile))).toEqual(["secret.key"]);
    expect(await sealed()).toEqual(before);
    // Once the backup is done, the rotation runs.
    expect((await runCli("lds", ["secrets", "rotate-key"], env)).exitCode).toBe(0);
    await own.drop();
  }, 120_000);

  it("a secret written by a process that opened the records before a rotation is refused (key_missing), not sealed with the old key", async () => {
    const own = await postgres.newDatabase();
    const keyFile = path.join(tempDirForFile(), "secret.key");
    fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const oldKey = fs.readFileSync(keyFile);
    const env = { LDS_DATABASE_URL: own.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir("lds-pg-rotate-") };
    expect((await runCli("lds", ["teams", "create", "docs"], env)).exitCode).toBe(0);
    const { store, close } = await openPostgresStore({ settings: { url: own.url } }, oldKey);
    try {
      expect((await runCli("lds", ["secrets", "rotate-key"], env)).exitCode).toBe(0);
      const refused = await saveProviderConfig(store, "github", { clientId: "client-id", clientSecret: "sealed-with-the-old-key" }).then(
        () => undefined,
        (err: { code?: string; message: string; hint?: string }) => err,
      );
      expect(refused).toMatchObject({ code: "key_missing", message: expect.stringMatching(/is no longer the database's .*was not written/), hint: expect.stringContaining("secretKeyFile") });
    } finally {
      await close();
    }
    const stored = await postgres.asSuperuser(own.name, async (c) => ({
      secrets: (await c.query("SELECT name FROM secrets")).rows,
      settings: (await c.query("SELECT key FROM settings WHERE key LIKE '%github%'")).rows,
    }));
    expect(stored).toEqual({ secrets: [], settings: [] });
    await own.drop();
  }, 120_000);
});

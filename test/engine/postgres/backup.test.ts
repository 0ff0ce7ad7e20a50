import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { execa } from "execa";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadVectorExtension } from "../../../src/index/sqlite/vector-index.js";
import { runCli, spawnCli } from "../../helpers/cli.js";
import { startGitServer, type GitServer } from "../../helpers/git-server.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";
import { bodyOf, eventually, startServer } from "../../helpers/server.js";
import { tempDir, tempDirForFile } from "../../helpers/temp.js";

// Issue 34, "Backup and restore: the same archive format": `lds backup` of a PostgreSQL volume writes the archive a
// SQLite volume's backup writes, from one snapshot; it verifies, drills and restores into SQLite as one does.
let postgres: PostgresTestServer;
let database: TestDatabase;
let git: GitServer;
let keyFile: string;
let password: string;

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.newDatabase();
  password = decodeURIComponent(new URL(database.url).password);
  git = await startGitServer("ghp_unused-token-for-private-repos");
  keyFile = path.join(tempDirForFile(), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  await seedThroughAServer();
}, 180_000);
afterAll(async () => {
  await git?.close();
  await postgres?.stop();
});

/** A replica's (or a command's) environment: the shared database and key, its own data directory. */
const pgEnv = (dataDir: string, more: Record<string, string> = {}) => ({
  LDS_DATABASE_URL: database.url,
  LDS_SECRET_KEY_FILE: keyFile,
  LDS_DATA_DIR: dataDir,
  LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host,
  LDS_GIT_DEFAULT_HOST: new URL(git.base).host,
  ...more,
});

const DOCS = {
  "README.md":
    "# Tidewater\n\nTidewater is a client for tide tables.\n\n## Retries\n\nBetween attempts Tidewater waits an exponentially growing delay with full jitter.\n\n```js\nconst api = createClient({ retries: 5, backoff: 'exponential' });\n```\n",
  "docs/harbours.md": "# Harbours\n\nEach harbour has a tide table per day.\n\n```js\nawait api.harbour('brest').tides({ day: '2026-11-27' });\n```\n",
};

/** Records and vectors written as production writes them: `lds init`, then a repository ingested by a server on PostgreSQL. */
async function seedThroughAServer(): Promise<void> {
  const dir = tempDirForFile("lds-pg-replica-");
  const init = await runCli("lds", ["init", "--email", "ops@example.com", "--json"], pgEnv(dir));
  expect(init.exitCode, init.stderr).toBe(0);
  const apiKey = (JSON.parse(init.stdout) as { key: string }).key;
  const server = await startServer(dir, pgEnv(dir));
  try {
    const repo = await git.createRepo("public", "acme", "tidewater", DOCS);
    const submitted = await fetch(`${server.url}/v2/add/repo/hostb`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ docsRepoUrl: repo.url }),
    });
    expect(submitted.status, await submitted.clone().text()).toBe(200);
    const search = `${server.url}/v2/libs/search?libraryName=tidewater&query=retries`;
    await eventually(async () => {
      const response = await fetch(search, { headers: { authorization: `Bearer ${apiKey}` } });
      return (await bodyOf(response)).json?.results?.find((r: { id: string; state: string }) => r.id === "/acme/tidewater" && r.state === "finalized");
    }, 90_000);
  } finally {
    await server.stop();
  }
}

async function inDatabase<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Sessions holding the backups' advisory lock (engine/postgres/serving-lock.ts's BACKUP_LOCK). */
const backupLockHolders = () => inDatabase(async (c) => Number((await c.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = $1", [0x4c445303])).rows[0].n));

describe("lds backup on PostgreSQL (issue 34)", () => {
  it("writes an archive that verifies, passes the restore drill and restores into SQLite with the same snippets and answers", async () => {
    const dataDir = tempDir("lds-pg-cmd-");
    const dest = tempDir("lds-pg-archives-");
    const backup = await runCli("lds", ["backup", "--to", dest, "--json"], pgEnv(dataDir));
    expect(backup.exitCode, backup.stderr).toBe(0);
    const result = JSON.parse(backup.stdout);
    expect(result).toMatchObject({ libraries: 1, partial: [] });
    const archive = result.location as string;
    expect(fs.readdirSync(dest)).toEqual([path.basename(archive)]);
    // Nothing of the database URL's secret anywhere: output, manifest, what the staging left (nothing).
    expect(backup.stdout + backup.stderr).not.toContain(password);
    const manifestText = (await execa("tar", ["-xOf", archive, "manifest.json"])).stdout;
    expect(manifestText).not.toContain(password);
    expect(manifestText).not.toContain("postgres://");
    const manifest = JSON.parse(manifestText);
    expect(manifest.formatVersion).toBe(2);
    expect(manifest.canaries.length).toBeGreaterThan(0);
    expect(fs.readdirSync(dataDir).filter((f) => f.startsWith("backup-staging-"))).toEqual([]);
    // The lock went with the command's connection.
    expect(await backupLockHolders()).toBe(0);

    // The same counts as the database serves.
    const live = await runCli("lds", ["libraries", "list", "--json"], pgEnv(dataDir));
    expect(live.exitCode, live.stderr).toBe(0);
    const liveSnippets = (JSON.parse(live.stdout) as { libraries: Array<{ id: string; totalSnippets: number }> }).libraries.map((l) => [l.id, l.totalSnippets]);
    expect(manifest.libraries.map((l: { id: string; snippets: number }) => [l.id, l.snippets])).toEqual(liveSnippets);
    expect(liveSnippets[0]![1]).toBeGreaterThan(0);

    // Checked and drilled as a SQLite volume's archive is: every served snippet has its vector, the canaries answer.
    const drill = await runCli("lds", ["verify", archive, "--restore-test", "--json"]);
    expect(drill.exitCode, drill.stderr).toBe(0);
    const drilled = JSON.parse(drill.stdout);
    expect(drilled).toMatchObject({ ok: true, restoreTest: true });
    expect(drilled.checks.find((c: { part: string }) => c.part === "canary queries").detail).toBe(`${manifest.canaries.length} answer as at backup time`);

    // Restored into a fresh SQLite data volume, which then serves the same library from its own files.
    const target = path.join(tempDir(), "restored");
    const restored = await runCli("restore", [archive, "--data-dir", target, "--yes"]);
    expect(restored.exitCode, restored.stderr).toBe(0);
    const listed = await runCli("lds", ["libraries", "list", "--json", "--data-dir", target]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { libraries: Array<{ id: string; totalSnippets: number }> }).libraries.map((l) => [l.id, l.totalSnippets])).toEqual(liveSnippets);
    const context = await runCli("lds", ["context", "/acme/tidewater", "retry backoff jitter", "--data-dir", target]);
    expect(context.exitCode, context.stderr).toBe(0);
    expect(context.stdout).toContain("exponentially growing delay");

    // The vector index is the one a SQLite volume keeps, filled from snippet_vectors, for the server's embedder.
    const vectorRows = await inDatabase(async (c) => Number((await c.query("SELECT count(*) AS n FROM snippet_vectors")).rows[0].n));
    expect(vectorRows).toBeGreaterThan(0);
    const vectors = new Database(path.join(target, "vectors.db"), { readonly: true });
    try {
      loadVectorExtension(vectors);
      const meta = Object.fromEntries((vectors.prepare("SELECT key, value FROM vector_meta").all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]));
      expect(meta).toMatchObject({ layout: "2", complete: "1", embedder: "hashing-v2-384", dimensions: "384" });
      expect(vectors.prepare("SELECT count(*) FROM vec_snippets").pluck().get()).toBe(vectorRows);
    } finally {
      vectors.close();
    }
  }, 180_000);

  it("labels the archive's vectors with the embedder the database records (the server's), not the backing-up command's LDS_EMBEDDINGS_*", async () => {
    const dest = tempDir("lds-pg-archives-");
    // Another provider's settings in the command's environment (unreachable: a backup never embeds anything).
    const foreign = { LDS_EMBEDDINGS_URL: "http://127.0.0.1:9/v1", LDS_EMBEDDINGS_MODEL: "foreign-model", LDS_EMBEDDINGS_DIMENSIONS: "8" };
    const backup = await runCli("lds", ["backup", "--to", dest, "--json"], pgEnv(tempDir("lds-pg-cmd-"), foreign));
    expect(backup.exitCode, backup.stderr).toBe(0);
    const recorded = await inDatabase(async (c) => (await c.query("SELECT value FROM settings WHERE key = 'vectors.embedder'")).rows[0]?.value);
    expect(JSON.parse(recorded)).toEqual({ id: "hashing-v2-384", dimensions: 384 });
    const unpacked = tempDir("lds-pg-unpacked-");
    await execa("tar", ["-xf", JSON.parse(backup.stdout).location, "-C", unpacked]);
    const vectors = new Database(path.join(unpacked, "vectors", "vectors.db"), { readonly: true });
    try {
      loadVectorExtension(vectors);
      const meta = Object.fromEntries((vectors.prepare("SELECT key, value FROM vector_meta").all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]));
      expect(meta).toMatchObject({ layout: "2", complete: "1", embedder: "hashing-v2-384", dimensions: "384" });
      expect(vectors.prepare("SELECT count(*) FROM vec_snippets").pluck().get()).toBeGreaterThan(0);
    } finally {
      vectors.close();
    }
  }, 120_000);

  it("runs one backup at a time across processes: a second one is refused naming the holder, who frees the lock by dying", async () => {
    const dest = tempDir("lds-pg-archives-");
    // A backup that holds the lock for a minute (util/failpoint.ts), from its own data directory (another host's, say).
    const holder = spawnCli("lds", ["backup", "--to", dest], pgEnv(tempDir("lds-pg-cmd-"), { LDS_FAILPOINT: "backup-holding-lock" }));
    try {
      await eventually(async () => (await backupLockHolders()) === 1, 30_000);
      const second = await runCli("lds", ["backup", "--to", dest], pgEnv(tempDir("lds-pg-cmd-")));
      expect(second.exitCode).toBe(5);
      expect(second.stderr).toMatch(new RegExp(`^Error: A backup of the database at 127\\.0\\.0\\.1:${postgres.port} is already running \\(lds backup, pid ${holder.pid} on `, "m"));
      expect(second.stderr).not.toContain(password);
      // Pruning waits for no backup either: it takes the same lock, in the database.
      const prune = await runCli("lds", ["backups", "prune", "--from", dest, "--keep", "1"], pgEnv(tempDir("lds-pg-cmd-")));
      expect(prune.exitCode).toBe(5);
      expect(prune.stderr).toMatch(/^Error: A backup of the database at .* is already running \(lds backup, pid /m);
    } finally {
      holder.kill("SIGKILL");
      await holder;
    }
    // PostgreSQL let go of the lock with the dead holder's connection: nothing stale is left to recover.
    await eventually(async () => (await backupLockHolders()) === 0, 10_000);
    expect(fs.readdirSync(dest)).toEqual([]);
    const next = await runCli("lds", ["backup", "--to", dest], pgEnv(tempDir("lds-pg-cmd-")));
    expect(next.exitCode, next.stderr).toBe(0);
    expect(fs.readdirSync(dest)).toHaveLength(1);
  }, 120_000);

  it("refuses the default destination, <data-dir>/backups, which each replica would keep for itself", async () => {
    const dataDir = tempDir("lds-pg-cmd-");
    const result = await runCli("lds", ["backup"], pgEnv(dataDir));
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^Error: The default backup destination .*backups is this replica's own folder: with a PostgreSQL database every replica would keep archives of its own/m);
    expect(result.stderr).toMatch(/^Hint: Configure a shared destination/m);
    expect(fs.existsSync(path.join(dataDir, "backups"))).toBe(false);
  });

  it("refuses a key file that is not the database's key (key_missing) and writes no archive", async () => {
    const dataDir = tempDir("lds-pg-cmd-");
    const dest = tempDir("lds-pg-archives-");
    const otherKey = path.join(tempDir(), "other.key");
    fs.writeFileSync(otherKey, randomBytes(32), { mode: 0o600 });
    const result = await runCli("lds", ["backup", "--to", dest], pgEnv(dataDir, { LDS_SECRET_KEY_FILE: otherKey }));
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toMatch(new RegExp(`^Error: ${otherKey} is not the key the database at 127\\.0\\.0\\.1:${postgres.port} was sealed with .*; no archive was written\\.`, "m"));
    expect(result.stderr).not.toContain(password);
    expect(fs.readdirSync(dest)).toEqual([]);
    expect(fs.readdirSync(dataDir).filter((f) => f.startsWith("backup-staging-"))).toEqual([]);
    expect(await backupLockHolders()).toBe(0);
  });
});

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKUP_LOCK } from "../../src/engine/postgres/serving-lock.js";
import { readEntries } from "../helpers/archives.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../helpers/postgres-server.js";
import { bodyOf, startServer, type TestServer } from "../helpers/server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";

// Issue 34, "Backup and restore": a SQLite volume's archive restored into PostgreSQL with `lds-restore --database-url`
// (a new schema swapped in, the live one kept), served by `lds serve` on that database with the archive's key.
let postgres: PostgresTestServer;
let git: GitServer;
const servers: TestServer[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  git = await startGitServer("ghp_unused-token-for-private-repos");
}, 60_000);
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
  await git?.close();
  await postgres?.stop();
});

const DOCS = {
  "README.md":
    "# Tidewater\n\nTidewater is a client for tide tables.\n\n## Retries\n\nBetween attempts Tidewater waits an exponentially growing delay with full jitter.\n\n```js\nconst api = createClient({ retries: 5, backoff: 'exponential' });\n```\n",
  "docs/harbours.md": "# Harbours\n\nEach harbour has a tide table per day.\n\n```js\nawait api.harbour('brest').tides({ day: '2026-11-27' });\n```\n",
  "docs/moorings.md": "# Moorings\n\nA mooring holds a boat between tides; its chain length follows the tidal range.\n",
};

/** A key file of 32 random bytes, mode 0600, in a folder of its own. */
function newKeyFile(): string {
  const file = path.join(tempDirForFile(), "secret.key");
  fs.writeFileSync(file, randomBytes(32), { mode: 0o600 });
  return file;
}

let repos = 0;

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

async function getJson(url: string, apiKey?: string) {
  const response = await fetch(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  return { status: response.status, ...(await bodyOf(response)) };
}

async function schemasOf(database: TestDatabase): Promise<string[]> {
  return postgres.asSuperuser(database.name, async (c) =>
    (await c.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lds_%' OR nspname = 'public' ORDER BY 1")).rows.map((r) => r.nspname),
  );
}

/** A SQLite volume with an API key, a git token and a library ingested from a real git repository over HTTP; its archive. */
async function sqliteArchive(): Promise<{ dataDir: string; archive: string; apiKey: string; manifest: any; key: Buffer }> {
  const dataDir = tempDir("lds-sqlite-source-");
  const env = { LDS_DATA_DIR: dataDir };
  const init = await runCli("lds", ["init", "--email", "ops@example.com", "--json"], env);
  expect(init.exitCode, init.stderr).toBe(0);
  const apiKey = (JSON.parse(init.stdout) as { key: string }).key;
  const token = await runCli("lds", ["connections", "add-git", "--team", "default", "--host", "git.example.test"], { ...env, LDS_CONNECTION_TOKEN: "restored-token-123" });
  expect(token.exitCode, token.stderr).toBe(0);
  const repo = await git.createRepo("public", "acme", `tidewater-${++repos}`, DOCS);
  const host = new URL(git.base).host;
  const ingested = await runCli("lds", ["ingest", "git", repo.url, "--allow-http-host", host], env);
  expect(ingested.exitCode, ingested.stderr).toBe(0);
  const backupsDir = tempDir("lds-backups-");
  const backup = await runCli("lds", ["backup", "--to", backupsDir, "--json"], env);
  expect(backup.exitCode, backup.stderr).toBe(0);
  const archive = (JSON.parse(backup.stdout) as { path: string }).path;
  const manifest = JSON.parse((await readEntries(archive)).find((e) => e.path === "manifest.json")!.body!.toString());
  return { dataDir, archive, apiKey, manifest, key: fs.readFileSync(path.join(dataDir, "secret.key")) };
}

describe("lds-restore ARCHIVE --database-url URL (issue 34)", () => {
  it("restores a SQLite volume's archive into PostgreSQL: lds serve answers its snippets and canaries, vectors are kept, the key file holds the archive's key", async () => {
    const source = await sqliteArchive();
    const library = source.manifest.libraries.find((l: { id: string }) => l.id.endsWith("/acme/tidewater-1"));
    expect(library, JSON.stringify(source.manifest.libraries)).toBeDefined();
    expect(library.snippets).toBeGreaterThan(0);
    expect(source.manifest.canaries.length).toBeGreaterThan(0);

    // The database already serves records of its own, sealed with another key: what the restore sets aside.
    const database = await postgres.newDatabase();
    const keyFile = newKeyFile();
    const oldKey = fs.readFileSync(keyFile);
    const live = { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir("lds-pg-live-") };
    expect((await runCli("lds", ["teams", "create", "before-restore"], live)).exitCode).toBe(0);

    const workDir = tempDir("lds-restore-work-");
    const restored = await runCli("restore", [source.archive, "--database-url", database.url, "--yes", "--json"], { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: workDir });
    expect(restored.exitCode, restored.stderr).toBe(0);
    const report = JSON.parse(restored.stdout);
    expect(report).toMatchObject({
      ok: true,
      database: `127.0.0.1:${postgres.port}/${database.name}`,
      previousSchema: expect.stringMatching(/^lds_pre_restore_\d{8}t\d{6}z$/),
      requeued: [],
      snippets: library.snippets,
      key: { changed: true, file: keyFile, keptAs: expect.stringMatching(/\.pre-restore-\d{8}T\d{6}Z$/) },
    });
    expect(report.goBack).toContain(`ALTER SCHEMA ${report.previousSchema} RENAME TO public`);
    expect(restored.stdout).not.toContain(new URL(database.url).password);
    // The work folder (the extracted archive) is gone; nothing of the archive's files stays in the data directory.
    expect(fs.readdirSync(workDir)).toEqual([]);

    // The key: the archive's in place (0600), the previous one kept beside it (0600), no staged key left.
    expect(fs.readFileSync(keyFile).equals(source.key)).toBe(true);
    expect(modeOf(keyFile)).toBe("600");
    expect(fs.readFileSync(report.key.keptAs).equals(oldKey)).toBe(true);
    expect(modeOf(report.key.keptAs)).toBe("600");
    expect(fs.existsSync(`${keyFile}.next`)).toBe(false);

    // The previous schema is kept, readable: the way back.
    expect(await schemasOf(database)).toEqual([report.previousSchema, "public"]);
    const kept = await postgres.asSuperuser(database.name, (c) => c.query(`SELECT name FROM ${report.previousSchema}.teams ORDER BY name`));
    expect(kept.rows.map((r) => r.name)).toContain("before-restore");
    // Every snippet's vector came with the records.
    const counts = await postgres.asSuperuser(database.name, (c) => c.query("SELECT (SELECT count(*) FROM public.snippet_vectors)::int AS vectors, (SELECT count(*) FROM public.snippets)::int AS snippets"));
    expect(counts.rows[0]).toEqual({ vectors: report.snippets, snippets: report.snippets });
    expect(report.vectors).toBe(report.snippets);

    // A replica still holding the old key is refused at start (key_missing), before it serves anything.
    const stale = path.join(tempDirForFile(), "secret.key");
    fs.writeFileSync(stale, oldKey, { mode: 0o600 });
    const refused = await runCli("lds", ["teams", "list"], { ...live, LDS_SECRET_KEY_FILE: stale });
    expect(refused.exitCode).toBe(9);
    expect(refused.stderr).toMatch(/is not the key the database at 127\.0\.0\.1:\d+ was sealed with/);

    // lds serve on the database, with the restored key: the archive's API key, library, snippet count and canaries.
    const serveDir = tempDir("lds-pg-replica-");
    const server = await startServer(serveDir, { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: serveDir });
    servers.push(server);
    const found = await getJson(`${server.url}/v2/libs/search?libraryName=tidewater-1&query=retries`, source.apiKey);
    expect(found.status, found.text).toBe(200);
    expect(found.json.results).toEqual([expect.objectContaining({ id: library.id, state: "finalized", totalSnippets: library.snippets })]);
    const sourceDb = (await import("better-sqlite3")).default;
    const db = new sourceDb(path.join(source.dataDir, "lds.db"), { readonly: true });
    try {
      for (const canary of source.manifest.canaries as Array<{ libraryId: string; query: string; top: number[] }>) {
        const best = db.prepare("SELECT content FROM snippets WHERE id = ?").pluck().get(canary.top[0]) as string;
        const answer = await getJson(`${server.url}/v2/context?libraryId=${encodeURIComponent(canary.libraryId)}&query=${encodeURIComponent(canary.query)}&type=json`, source.apiKey);
        expect(answer.status, answer.text).toBe(200);
        expect(JSON.stringify(answer.json), canary.query).toContain(JSON.stringify(best.slice(0, 40)).slice(1, -1));
      }
    } finally {
      db.close();
    }
    await server.stop();
    servers.splice(servers.indexOf(server), 1);

    // The same archive again: the key file is the archive's already, so it is left as it is.
    const again = await runCli("restore", [source.archive, "--yes"], { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: workDir });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^Restored 127\\.0\\.0\\.1:${postgres.port}/${database.name} from `, "m"));
    expect(again.stdout).toMatch(/^The previous live schema is kept as lds_pre_restore_\d{8}t\d{6}z \(nothing was deleted\)\. To go back/m);
    expect(again.stdout).toContain(`The key is unchanged (${keyFile} is the archive's).`);
    expect(fs.readFileSync(keyFile).equals(source.key)).toBe(true);
    await database.drop();
  }, 240_000);

  it("refuses while a replica serves the database (volume_locked naming it): the live schema, its data and the key file unchanged", async () => {
    const source = await sqliteArchive();
    const database = await postgres.newDatabase();
    const keyFile = newKeyFile();
    const oldKey = fs.readFileSync(keyFile);
    const serveDir = tempDir("lds-pg-replica-");
    const env = { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: serveDir };
    expect((await runCli("lds", ["teams", "create", "live-team"], env)).exitCode).toBe(0);
    const server = await startServer(serveDir, env);
    servers.push(server);

    const refused = await runCli("restore", [source.archive, "--database-url", database.url, "--yes"], { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() });
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toMatch(
      new RegExp(`^Error: Replicas are serving 127\\.0\\.0\\.1:${postgres.port}/${database.name}: lds serve on \\S+ pid \\d+ at 127\\.0\\.0\\.1; the archive was not restored`, "m"),
    );
    expect(await schemasOf(database)).toEqual(["public"]);
    const teams = await postgres.asSuperuser(database.name, (c) => c.query("SELECT name FROM public.teams ORDER BY name"));
    expect(teams.rows.map((r) => r.name)).toContain("live-team");
    expect(fs.readFileSync(keyFile).equals(oldKey)).toBe(true);
    expect(fs.readdirSync(path.dirname(keyFile))).toEqual(["secret.key"]);
    expect((await getJson(`${server.url}/api/ready`)).status).toBe(200);

    await server.stop();
    servers.splice(servers.indexOf(server), 1);
    await database.drop();
  }, 180_000);

  it("refuses while a backup holds the backups' lock (backup_running naming it); a key that cannot be staged drops the imported schema: nothing changed either way", async () => {
    const fixture = path.join(ROOT, "fixtures/archives/lds-0.1.0-schema2.tar");
    const database = await postgres.newDatabase();
    const keyFile = newKeyFile();
    const oldKey = fs.readFileSync(keyFile);
    const env = { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() };
    expect((await runCli("lds", ["teams", "create", "live-team"], env)).exitCode).toBe(0);
    const unchanged = async () => {
      expect(await schemasOf(database)).toEqual(["public"]);
      const teams = await postgres.asSuperuser(database.name, (c) => c.query("SELECT name FROM public.teams ORDER BY name"));
      expect(teams.rows.map((r) => r.name)).toContain("live-team");
      expect(fs.readFileSync(keyFile).equals(oldKey)).toBe(true);
    };

    // A backup copying (its session holds the backups' lock, as backup-lock.ts takes it): the restore waits for nothing.
    const backup = new pg.Client({ connectionString: database.url, application_name: "lds backup, pid 4242 on backup-host" });
    await backup.connect();
    try {
      expect((await backup.query("SELECT pg_try_advisory_lock($1) AS taken", [BACKUP_LOCK])).rows[0].taken).toBe(true);
      const refused = await runCli("restore", [fixture, "--yes"], env);
      expect(refused.exitCode, refused.stderr).toBe(5);
      expect(refused.stderr).toMatch(/^Error: A backup of the database at 127\.0\.0\.1:\d+ is already running \(lds backup, pid 4242 on backup-host.*\)\. The archive was not restored/m);
    } finally {
      await backup.end();
    }
    await unchanged();
    expect(fs.readdirSync(path.dirname(keyFile))).toEqual(["secret.key"]);

    // The archive's key cannot be staged (a folder where <file>.next goes), after the import committed: dropped.
    fs.mkdirSync(`${keyFile}.next`);
    fs.writeFileSync(`${keyFile}.next/in-the-way`, "");
    const failed = await runCli("restore", [fixture, "--yes"], env);
    expect(failed.exitCode).not.toBe(0);
    expect(failed.stderr).toMatch(/The imported records were dropped: the archive was not restored \(the live schema and the key file are as they were\)/);
    await unchanged();
    expect(fs.readdirSync(path.dirname(keyFile)).sort()).toEqual(["secret.key", "secret.key.next"]);
    await database.drop();
  }, 120_000);

  it("restores the archive of an older release (0.1.0, schema 2): its copy migrated, the library being indexed queued, its vectors of no known embedder left out", async () => {
    const database = await postgres.newDatabase();
    const keyFile = newKeyFile();
    const fixture = path.join(ROOT, "fixtures/archives/lds-0.1.0-schema2.tar");
    const result = await runCli("restore", [fixture, "--database-url", database.url, "--yes", "--json"], { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() });
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    // Its vectors name no embedder (an older layout): not imported, as a SQLite restore rebuilds them rather than trust them.
    expect(report).toMatchObject({ migrated: true, requeued: ["/acme/gadgets"], vectors: 0, key: { changed: true } });
    expect(report.vectorsSkipped).toMatch(/made by an unknown or unfinished embedding and the database records no embedder: none were imported/);
    const rows = await postgres.asSuperuser(database.name, async (c) => ({
      version: (await c.query("SELECT max(version)::int AS v FROM public.schema_migrations")).rows[0].v,
      jobs: (await c.query("SELECT library_id, state FROM public.jobs ORDER BY library_id")).rows,
      vectors: (await c.query("SELECT count(*)::int AS n FROM public.snippet_vectors")).rows[0].n,
    }));
    expect(rows.version).toBeGreaterThanOrEqual(14);
    expect(rows.jobs).toContainEqual({ library_id: "/acme/gadgets", state: "queued" });
    expect(rows.vectors).toBe(0);
    // The restored records open with the key file the restore left.
    const listed = await runCli("lds", ["libraries", "list", "--json"], { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() });
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).libraries.map((l: { id: string }) => l.id)).toContain("/acme/gadgets");
    await database.drop();
  }, 120_000);

  it("imports none of an archive's vectors made by another embedder than the one the database records, and says so", async () => {
    const source = await sqliteArchive();
    const database = await postgres.newDatabase();
    const keyFile = newKeyFile();
    const env = { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() };
    // A database whose replicas embed with another model: opened once (its schema made), its vectors' maker recorded.
    const opened = await runCli("lds", ["libraries", "list", "--json"], { ...env, LDS_DATABASE_URL: database.url });
    expect(opened.exitCode, opened.stderr).toBe(0);
    const other = JSON.stringify({ id: "other-model-8", dimensions: 8 });
    await postgres.asSuperuser(database.name, (c) => c.query("INSERT INTO public.settings (key, value) VALUES ('vectors.embedder', $1)", [other]));

    const result = await runCli("restore", [source.archive, "--database-url", database.url, "--yes", "--json"], env);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.snippets).toBeGreaterThan(0);
    expect(report.vectors).toBe(0);
    expect(report.vectorsSkipped).toMatch(/made by hashing-v2-384 \(384 dimensions\) and the database's embedder is other-model-8 \(8 dimensions\): none were imported/);
    const rows = await postgres.asSuperuser(database.name, async (c) => ({
      vectors: (await c.query("SELECT count(*)::int AS n FROM public.snippet_vectors")).rows[0].n,
      snippets: (await c.query("SELECT count(*)::int AS n FROM public.snippets")).rows[0].n,
      maker: (await c.query("SELECT value FROM public.settings WHERE key = 'vectors.embedder'")).rows[0]?.value,
    }));
    expect(rows).toEqual({ vectors: 0, snippets: report.snippets, maker: other });
    // The text report says it too.
    const again = await runCli("restore", [source.archive, "--database-url", database.url, "--yes"], env);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Vectors not restored: the archive's vectors were made by hashing-v2-384 .*none were imported/m);
    await database.drop();
  }, 180_000);

  it("a crash between the swap and the key's rename is finished by the next open; one before the swap leaves the live schema and key as they were", async () => {
    const fixture = path.join(ROOT, "fixtures/archives/lds-0.1.0-schema2.tar");
    const database = await postgres.newDatabase();
    const keyFile = newKeyFile();
    const oldKey = fs.readFileSync(keyFile);
    const env = { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() };
    expect((await runCli("lds", ["teams", "create", "live-team"], env)).exitCode).toBe(0);
    const teams = async () => (await postgres.asSuperuser(database.name, (c) => c.query("SELECT name FROM public.teams ORDER BY name"))).rows.map((r) => r.name);

    // Killed before the swap: the live schema and the key are the old ones; the staged key is left unused.
    const early = await runCli("restore", [fixture, "--yes"], { ...env, LDS_FAILPOINT: "pg-restore-before-swap" });
    expect(early.exitCode, early.stderr).not.toBe(0);
    expect(await teams()).toContain("live-team");
    expect((await runCli("lds", ["teams", "list"], env)).exitCode).toBe(0);
    expect(fs.readFileSync(keyFile).equals(oldKey)).toBe(true);
    expect(fs.existsSync(`${keyFile}.next`), "a .next file that is not the database's key stays where it is").toBe(true);

    // Killed after the swap committed, before the rename: the archive's key waits as <file>.next; the next command on
    // this machine puts it in place (its fingerprint is the one the restored records hold) and opens them.
    const late = await runCli("restore", [fixture, "--yes"], { ...env, LDS_FAILPOINT: "pg-restore-swapped" });
    expect(late.exitCode, late.stderr).not.toBe(0);
    expect(await teams()).not.toContain("live-team");
    expect(fs.readFileSync(keyFile).equals(oldKey)).toBe(true);
    const archiveKey = fs.readFileSync(`${keyFile}.next`);
    const listed = await runCli("lds", ["libraries", "list", "--json"], env);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).libraries.map((l: { id: string }) => l.id)).toContain("/acme/gadgets");
    expect(fs.readFileSync(keyFile).equals(archiveKey)).toBe(true);
    expect(fs.existsSync(`${keyFile}.next`)).toBe(false);
    await database.drop();
  }, 120_000);
});

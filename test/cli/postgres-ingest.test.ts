import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKUP_LOCK } from "../../src/engine/postgres/serving-lock.js";
import { ROOT, runCli, spawnCli } from "../helpers/cli.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../helpers/postgres-server.js";
import { bodyOf, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";

// Issue 34, "the same CLI": `lds ingest git` on PostgreSQL writes its batch into the records from a data directory of
// its own; a serving replica that never saw the ingestion follows the published batch by itself.
let postgres: PostgresTestServer;
let database: TestDatabase;
let git: GitServer;
let keyFile: string;
const servers: TestServer[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.newDatabase();
  git = await startGitServer("ghp_unused-token-for-private-repos");
  keyFile = path.join(tempDirForFile(), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
});
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
  await git?.close();
  await postgres?.stop();
});

/** The shared database and key, a data directory of its own, the loopback git host allowed. */
const envOf = (dataDir: string) => ({
  LDS_DATABASE_URL: database.url,
  LDS_SECRET_KEY_FILE: keyFile,
  LDS_DATA_DIR: dataDir,
  LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host,
  LDS_GIT_DEFAULT_HOST: new URL(git.base).host,
});

const DOCS = {
  "README.md":
    "# Tidewater\n\nTidewater is a client for tide tables.\n\n## Retries\n\nBetween attempts Tidewater waits an exponentially growing delay with full jitter.\n\n```js\nconst api = createClient({ retries: 5, backoff: 'exponential' });\n```\n",
  "docs/harbours.md": "# Harbours\n\nEach harbour has a tide table per day.\n\n```js\nawait api.harbour('brest').tides({ day: '2026-11-27' });\n```\n",
};

async function getJson(url: string, apiKey: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  return { status: response.status, ...(await bodyOf(response)) };
}

/** The live batches of a library version, as the records hold them. */
async function liveBatches(libraryId: string): Promise<number> {
  const { rows } = await postgres.asSuperuser(database.name, (c) =>
    c.query<{ n: number }>("SELECT count(*)::int AS n FROM public.snippet_batches WHERE library_id = $1 AND version = '' AND state = 'live'", [libraryId]),
  );
  return rows[0]!.n;
}

/** Whether an ingestion's batch of the library is being written (false before the command made the schema). */
async function batchWriting(libraryId: string): Promise<boolean> {
  const query = "SELECT 1 FROM public.snippet_batches WHERE library_id = $1 AND state = 'writing'";
  return postgres
    .asSuperuser(database.name, (c) => c.query(query, [libraryId]))
    .then(
      ({ rows }) => rows.length === 1,
      () => false,
    );
}

describe("lds ingest git on PostgreSQL (issue 34)", () => {
  it("ingests from another data directory into the records; a serving replica that never saw it answers /v2/context within 10 s; unchanged, nothing to do; another embedder refused", async () => {
    const serveDir = tempDir("lds-pg-serve-");
    const init = await runCli("lds", ["init", "--email", "ops@example.com", "--json"], envOf(serveDir));
    expect(init.exitCode, init.stderr).toBe(0);
    const apiKey = (JSON.parse(init.stdout) as { key: string }).key;
    const replica = await startServer(serveDir, envOf(serveDir));
    servers.push(replica);

    const repo = await git.createRepo("public", "acme", "tidewater", DOCS);
    const ingestDir = tempDir("lds-pg-ingest-");
    const ingested = await runCli("lds", ["ingest", "git", repo.url], envOf(ingestDir));
    expect(ingested.exitCode, ingested.stderr).toBe(0);
    expect(ingested.stdout).toMatch(/^\/acme\/tidewater: indexed [1-9]\d* snippets from \S+ at [0-9a-f]{12}\.$/m);
    const doneAt = Date.now();
    // The command opened no search files and left no work folder: its batch is in the records only.
    expect(fs.existsSync(path.join(ingestDir, "search"))).toBe(false);
    expect(fs.readdirSync(path.join(ingestDir, "work"))).toEqual([]);

    const context = `${replica.url}/v2/context?libraryId=/acme/tidewater&query=${encodeURIComponent("retry backoff jitter")}&type=json`;
    const answer = await eventually(async () => {
      const got = await getJson(context, apiKey);
      return got.status === 200 && got.text.includes("exponentially growing delay") ? got : undefined;
    }, 10_000);
    expect(Date.now() - doneAt).toBeLessThanOrEqual(10_000);
    const snippets = answer.json as { codeSnippets: unknown[]; infoSnippets: unknown[] };
    expect(snippets.codeSnippets.length + snippets.infoSnippets.length).toBeGreaterThan(0);
    // The replica's follower holds the batch: no lag left.
    await eventually(async () => (await fetch(`${replica.url}/api/health`).then((r) => r.json() as Promise<{ search?: { lagBatches: number } }>)).search?.lagBatches === 0);

    const again = await runCli("lds", ["ingest", "git", repo.url], envOf(ingestDir));
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^\/acme\/tidewater: \S+ is still at [0-9a-f]{12}; nothing to do\.$/m);
    expect(await liveBatches("/acme/tidewater")).toBe(1);

    // Vectors of another embedder than the records' would be searched as theirs: refused before anything is written.
    await repo.commit({ "docs/moorings.md": "# Moorings\n\nA mooring holds a boat between tides.\n" });
    const foreign = { ...envOf(ingestDir), LDS_EMBEDDINGS_URL: "http://127.0.0.1:1/v1", LDS_EMBEDDINGS_MODEL: "other-model", LDS_EMBEDDINGS_DIMENSIONS: "8" };
    const refused = await runCli("lds", ["ingest", "git", repo.url], foreign);
    expect(refused.exitCode, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/^Error: The records' vectors were made by the embedder hashing-\S+ \(\d+ dimensions\); this command would embed with \S+ \(8\)\.$/m);
    expect(refused.stderr).toMatch(/^Hint: Run the command with the servers' embedding settings \(.*LDS_EMBEDDINGS_URL/m);
    expect(await liveBatches("/acme/tidewater")).toBe(1);
    const unchangedState = await postgres.asSuperuser(database.name, (c) => c.query("SELECT state FROM public.libraries WHERE id = '/acme/tidewater'"));
    expect(unchangedState.rows[0]!.state).toBe("finalized");
  }, 180_000);

  it("holds the serving lock while it runs: a restore into the database refuses, naming the command; the ingestion then finishes", async () => {
    for (const s of servers.splice(0)) await s.stop();
    const repo = await git.createRepo("public", "acme", "harbours", DOCS);
    const ingestDir = tempDir("lds-pg-ingest-held-");
    // Held after its fetch (a delaypoint of 20 s): the ingestion is under way while the restore is tried.
    const held = spawnCli("lds", ["ingest", "git", repo.url], { ...envOf(ingestDir), LDS_FAILPOINT: "ingestion-under-way" });
    const holder = `lds ingest git on \\S+ pid ${held.pid}`;
    await eventually(async () => {
      const { rows } = await postgres.asSuperuser(database.name, (c) => c.query("SELECT state FROM public.libraries WHERE id = '/acme/harbours'"));
      return rows[0]?.state === "fetching";
    });

    const fixture = path.join(ROOT, "fixtures/archives/lds-0.1.0-schema2.tar");
    const refused = await runCli("restore", [fixture, "--database-url", database.url, "--yes"], { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() });
    expect(refused.exitCode, refused.stderr).toBe(5);
    expect(refused.stderr).toMatch(new RegExp(`^Error: Replicas are serving 127\\.0\\.0\\.1:${postgres.port}/${database.name}: ${holder} at 127\\.0\\.0\\.1; the archive was not restored`, "m"));

    const finished = await held;
    expect(finished.exitCode, String(finished.stderr)).toBe(0);
    expect(String(finished.stdout)).toMatch(/^\/acme\/harbours: indexed [1-9]\d* snippets/m);
    expect(await liveBatches("/acme/harbours")).toBe(1);
    // Once it has finished, nothing holds the lock any more.
    const { rows } = await postgres.asSuperuser(database.name, (c) => c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'lds ingest git%'"));
    expect(rows[0]!.n).toBe(0);
  }, 180_000);

  it("of two ingestions of one library at once, the later one's batch goes live and the earlier one ends with ingestion_superseded, leaving the state to it", async () => {
    const repo = await git.createRepo("public", "acme", "moorings", DOCS);
    // The earlier one is held with its batch open (a delaypoint of 20 s) while the later one runs to the end.
    const earlier = spawnCli("lds", ["ingest", "git", repo.url], { ...envOf(tempDir("lds-pg-ingest-earlier-")), LDS_FAILPOINT: "ingestion-batch-open" });
    await eventually(() => batchWriting("/acme/moorings"));
    const later = await runCli("lds", ["ingest", "git", repo.url], envOf(tempDir("lds-pg-ingest-later-")));
    expect(later.exitCode, later.stderr).toBe(0);
    expect(later.stdout).toMatch(/^\/acme\/moorings: indexed [1-9]\d* snippets/m);

    const lost = await earlier;
    expect(lost.exitCode, String(lost.stdout)).toBe(5);
    expect(String(lost.stderr)).toMatch(/^Error: Another ingestion of \/acme\/moorings started after this one and replaces it; this one stopped without changing what is served\.$/m);
    expect(await liveBatches("/acme/moorings")).toBe(1);
    const { rows } = await postgres.asSuperuser(database.name, (c) => c.query("SELECT state, state_reason FROM public.libraries WHERE id = '/acme/moorings'"));
    expect(rows[0]).toEqual({ state: "finalized", state_reason: null });
  }, 180_000);

  it("does not wait for a backup under way: opening its batch takes a lock of its own, not the backups'", async () => {
    const repo = await git.createRepo("public", "acme", "quays", DOCS);
    await postgres.asSuperuser(database.name, async (c) => {
      // As a backup holds it for its whole run (engine/postgres/backup-lock.ts).
      await c.query("SELECT pg_advisory_lock($1)", [BACKUP_LOCK]);
      const ingested = await runCli("lds", ["ingest", "git", repo.url], { ...envOf(tempDir("lds-pg-ingest-backup-")), LDS_DATABASE_STATEMENT_TIMEOUT_MS: "5000" });
      expect(ingested.exitCode, ingested.stderr).toBe(0);
      expect(ingested.stdout).toMatch(/^\/acme\/quays: indexed [1-9]\d* snippets/m);
      await c.query("SELECT pg_advisory_unlock($1)", [BACKUP_LOCK]);
    });
    expect(await liveBatches("/acme/quays")).toBe(1);
  }, 180_000);

  it("a replica that starts while the command writes its batch leaves it alone (no job, but the command holds it)", async () => {
    const repo = await git.createRepo("public", "acme", "slipways", DOCS);
    const writing = spawnCli("lds", ["ingest", "git", repo.url], { ...envOf(tempDir("lds-pg-ingest-writing-")), LDS_FAILPOINT: "ingestion-batch-open" });
    await eventually(() => batchWriting("/acme/slipways"));
    // A starting replica retires the unfinished batches whose ingestion is gone (retireAbandonedBatches).
    const serveDir = tempDir("lds-pg-serve-late-");
    const replica = await startServer(serveDir, envOf(serveDir));
    servers.push(replica);
    const { rows } = await postgres.asSuperuser(database.name, (c) => c.query("SELECT state FROM public.snippet_batches WHERE library_id = '/acme/slipways'"));
    expect(rows).toEqual([{ state: "writing" }]);

    const finished = await writing;
    expect(finished.exitCode, String(finished.stderr)).toBe(0);
    expect(String(finished.stdout)).toMatch(/^\/acme\/slipways: indexed [1-9]\d* snippets/m);
    expect(await liveBatches("/acme/slipways")).toBe(1);
  }, 180_000);
});

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../helpers/postgres-server.js";
import { bodyOf, client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";

// Issue 34, "Done when" 1: two `lds serve` replicas, each with its own data directory, on one PostgreSQL database.
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

/** A replica's environment: the shared database and key, its own data directory, the loopback git host allowed. */
const replicaEnv = (dataDir: string) => ({
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

async function getJson(url: string, apiKey?: string) {
  const response = await fetch(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  return { status: response.status, ...(await bodyOf(response)) };
}

describe("two lds serve replicas on one PostgreSQL database (issue 34)", () => {
  it("a repository submitted on one replica is answered by /v2/context on the other within 10 s of being finalized", async () => {
    const [dirA, dirB] = [tempDir("lds-replica-a-"), tempDir("lds-replica-b-")];
    const init = await runCli("lds", ["init", "--email", "ops@example.com", "--json"], replicaEnv(dirA));
    expect(init.exitCode, init.stderr).toBe(0);
    const apiKey = (JSON.parse(init.stdout) as { key: string }).key;

    const [a, b] = await Promise.all([startServer(dirA, replicaEnv(dirA)), startServer(dirB, replicaEnv(dirB))]);
    servers.push(a, b);
    for (const replica of [a, b]) {
      const ready = await getJson(`${replica.url}/api/ready`);
      expect(ready.status, ready.text).toBe(200);
      expect(ready.json).toEqual({ status: "ready" });
    }
    // Each replica keeps its search files in its own data directory, never in the other's.
    expect(fs.existsSync(path.join(dirA, "search", "lds.db"))).toBe(true);
    expect(fs.existsSync(path.join(dirB, "search", "lds.db"))).toBe(true);
    // No SQLite records beside them: the records are in PostgreSQL.
    expect(fs.existsSync(path.join(dirA, "lds.db"))).toBe(false);

    const repo = await git.createRepo("public", "acme", "tidewater", DOCS);
    const submitted = await fetch(`${a.url}/v2/add/repo/hostb`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ docsRepoUrl: repo.url }),
    });
    expect(submitted.status, await submitted.clone().text()).toBe(200);
    expect(((await submitted.json()) as { libraryName: string }).libraryName).toBe("/acme/tidewater");

    // Finalized as the records say (asked of replica B: the state is shared), then B's answer, timed from then.
    const search = `${b.url}/v2/libs/search?libraryName=tidewater&query=retries`;
    await eventually(async () => (await getJson(search, apiKey)).json?.results?.find((r: { id: string; state: string }) => r.id === "/acme/tidewater" && r.state === "finalized"), 60_000);
    const finalizedAt = Date.now();
    const context = `${b.url}/v2/context?libraryId=/acme/tidewater&query=${encodeURIComponent("retry backoff jitter")}&type=json`;
    // B's first request already answers: a batch its files do not hold yet is fetched before ranking (ensureLive),
    // never "no snippets" nor an older batch.
    const first = await getJson(context, apiKey);
    const waitedMs = Date.now() - finalizedAt;
    expect(first.status, first.text).toBe(200);
    const answer = first.json as { codeSnippets: unknown[]; infoSnippets: unknown[] };
    expect(answer.codeSnippets.length + answer.infoSnippets.length).toBeGreaterThan(0);
    expect(waitedMs).toBeLessThanOrEqual(10_000);
    process.stdout.write(`replica B answered /v2/context ${waitedMs} ms after the library was finalized\n`);
    const texts = JSON.stringify(answer);
    expect(texts).toContain("exponentially growing delay");
    // The ingesting replica answers its own batch too (its files follow the records as B's do).
    const fromA = await getJson(context.replace(b.url, a.url), apiKey);
    expect(fromA.status, fromA.text).toBe(200);
    expect(fromA.json).toEqual(answer);

    // Both replicas hold every live batch: no search lag, the listener up.
    for (const replica of [a, b]) {
      const health = await eventually(async () => {
        const got = await getJson(`${replica.url}/api/health`);
        return got.json?.search?.lagBatches === 0 ? got.json : undefined;
      });
      expect(health).toMatchObject({ status: "ok", search: { lagBatches: 0, lagMs: 0, listening: true, caughtUp: true } });
      expect((await getJson(`${replica.url}/api/ready`)).status).toBe(200);
    }

    // A command beside the serving replicas, in replica A's own data directory.
    const listed = await runCli("lds", ["libraries", "list", "--json"], replicaEnv(dirA));
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { libraries: Array<{ id: string; processing: string }> }).libraries).toEqual([expect.objectContaining({ id: "/acme/tidewater", processing: "finalized" })]);
    const keys = await runCli("lds", ["keys", "list", "--json"], replicaEnv(dirB));
    expect(keys.exitCode, keys.stderr).toBe(0);
    expect((JSON.parse(keys.stdout) as Array<{ email: string }>).map((k) => k.email)).toEqual(["ops@example.com"]);
    // Both replicas started with LDS_ADMIN_PASSWORD: one made the first admin, both accept it. A restore staged in
    // the dashboard is refused before anything is taken (409): it would replace this replica's files, not the
    // records; the answer names the command-line restore into the database, run while no replica serves.
    for (const replica of [a, b]) {
      const admin = client(replica.url);
      expect((await admin.login()).status).toBe(200);
      const staged = await admin.post("/api/restore/stage", { name: "lds-backup-20261127T000000Z.tar", confirm: true });
      expect(staged.status, staged.text).toBe(409);
      expect(staged.json).toMatchObject({ error: "volume_locked", hint: expect.stringContaining("lds-restore ARCHIVE --database-url URL") });
      const uploaded = await admin.request("POST", "/api/restore/upload", undefined, { "content-type": "application/octet-stream" });
      expect(uploaded.status, uploaded.text).toBe(409);
    }
    expect(fs.existsSync(path.join(dirA, "restore-staged"))).toBe(false);
  }, 180_000);
});

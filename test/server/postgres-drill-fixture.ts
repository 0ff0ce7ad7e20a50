import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import pg from "pg";
import { runCli } from "../helpers/cli.js";
import type { GitServer, TestRepo } from "../helpers/git-server.js";
import type { PostgresTestServer, TestDatabase } from "../helpers/postgres-server.js";
import { serverPid, startServer, type TestServer } from "../helpers/server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";

/**
 * What the failure drills of issue 34 (done-when 2 and 7) share: replicas of `lds serve` on one database, a team and
 * key made by `lds init`, repositories submitted over HTTP, and the jobs and batches read from the tables.
 */
export interface Drill {
  database: TestDatabase;
  apiKey: string;
  /** Replicas, each with a data directory of its own, started at once (openDrill's `extraEnv` adds settings). */
  startReplicas(count: number): Promise<Replica[]>;
  /** Submit a repository on `replica` (POST /v2/add/repo/hostb): its library's id. */
  submit(replica: Replica, repo: TestRepo): Promise<string>;
  /** Submit each repository, on the replicas in turn, several at a time: the libraries' ids in the repositories' order. */
  submitAll(replicas: Replica[], repos: TestRepo[]): Promise<string[]>;
  /** One query as the application's role, on a connection of its own (the test's view of the tables). */
  query<T extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Snippet counts of each library's live batch (current content, version ""). */
  liveSnippetCounts(): Promise<Map<string, number>>;
}

export interface Replica extends TestServer {
  dataDir: string;
  pid: number;
}

/** Files of a small repository whose ingestion takes a moment (many pages), the same in every copy. */
export function docsOfSize(pages: number): Record<string, string> {
  const files: Record<string, string> = { "README.md": "# Drill\n\nA library made for the replica drills.\n" };
  for (let i = 0; i < pages; i++) {
    files[`docs/page-${i}.md`] =
      `# Page ${i}\n\nPage ${i} explains harbour ${i} and its tide tables.\n\n## Usage ${i}\n\nCall the client for harbour ${i}.\n\n` +
      "```js\n" +
      `await api.harbour('h${i}').tides({ day: '2026-11-${String((i % 28) + 1).padStart(2, "0")}' });\n` +
      "```\n";
  }
  return files;
}

export async function openDrill(postgres: PostgresTestServer, git: GitServer, extraEnv: Record<string, string>): Promise<Drill & { close(): Promise<void> }> {
  const database = await postgres.newDatabase();
  const keyFile = path.join(tempDirForFile(), `secret-${randomBytes(4).toString("hex")}.key`);
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  const envOf = (dataDir: string) => ({
    LDS_DATABASE_URL: database.url,
    LDS_SECRET_KEY_FILE: keyFile,
    LDS_DATA_DIR: dataDir,
    LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host,
    LDS_GIT_DEFAULT_HOST: new URL(git.base).host,
    // The drills send many requests from one key: the plan's limit is not what they test.
    LDS_RATE_LIMIT_FREE: "100000",
    ...extraEnv,
  });
  const firstDir = tempDir("lds-drill-");
  const init = await runCli("lds", ["init", "--email", "ops@example.com", "--json"], envOf(firstDir));
  expect(init.exitCode, init.stderr).toBe(0);
  const apiKey = (JSON.parse(init.stdout) as { key: string }).key;
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  pool.on("error", () => {});
  const replicas: Replica[] = [];
  let dirs = 0;

  const query = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => (await pool.query<T>(sql, params)).rows;
  const drill: Drill & { close(): Promise<void> } = {
    database,
    apiKey,
    startReplicas(count) {
      return Promise.all(
        [...Array(count).keys()].map(async () => {
          const dataDir = dirs++ === 0 ? firstDir : tempDir("lds-drill-");
          const server = await startServer(dataDir, envOf(dataDir));
          const replica = { ...server, dataDir, pid: serverPid(dataDir)! };
          replicas.push(replica);
          return replica;
        }),
      );
    },
    async submit(replica, repo) {
      const response = await fetch(`${replica.url}/v2/add/repo/hostb`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ docsRepoUrl: repo.url }),
      });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      return (JSON.parse(text) as { libraryName: string }).libraryName;
    },
    async submitAll(replicas, repos) {
      const ids: string[] = [];
      for (let i = 0; i < repos.length; i += 8) {
        const slice = repos.slice(i, i + 8);
        ids.push(...(await Promise.all(slice.map((repo, k) => drill.submit(replicas[(i + k) % replicas.length]!, repo)))));
      }
      return ids;
    },
    query,
    async liveSnippetCounts() {
      const rows = await query<{ library: string; count: number }>(
        `SELECT b.library_id AS library, count(s.id)::int AS count FROM snippet_batches b
         JOIN snippets s ON s.library_id = b.library_id AND s.version = b.version AND s.batch = b.batch
         WHERE b.state = 'live' AND b.version = '' GROUP BY b.library_id`,
      );
      return new Map(rows.map((r) => [r.library, r.count]));
    },
    async close() {
      for (const replica of replicas.splice(0)) if (replica.child.exitCode === null && !replica.child.killed) await replica.stop();
      await pool.end();
    },
  };
  return drill;
}

/**
 * `count` public repositories of the same files at /<owner>/<prefix>-<n>.git: one made with git, the others copies
 * of its bare directory (each a repository of its own to clone; made in milliseconds instead of git's seconds).
 */
export async function sameRepositories(git: GitServer, owner: string, prefix: string, count: number, files: Record<string, string>): Promise<TestRepo[]> {
  const first = await git.createRepo("public", owner, `${prefix}-0`, files);
  const copies = [...Array(count - 1).keys()].map((i) => {
    const name = `${prefix}-${i + 1}`;
    fs.cpSync(path.join(git.root, owner, `${prefix}-0.git`), path.join(git.root, owner, `${name}.git`), { recursive: true });
    return { ...first, url: first.url.replace(`/${prefix}-0.git`, `/${name}.git`) };
  });
  return [first, ...copies];
}

/** Snippets a SQLite volume makes of the repository (`lds ingest git`): the count a replica's ingestion must reach. */
export async function referenceSnippetCount(git: GitServer, repo: TestRepo): Promise<number> {
  const dataDir = tempDir("lds-drill-reference-");
  const ingested = await runCli("lds", ["ingest", "git", repo.url, "--data-dir", dataDir, "--allow-http-host", new URL(git.base).host, "--json"], {});
  expect(ingested.exitCode, ingested.stderr).toBe(0);
  return (JSON.parse(ingested.stdout) as { snippets: number }).snippets;
}

/** Wait for `check`, polling every `everyMs` (the drills time events to a fraction of a second). */
export async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs: number, what: string, everyMs = 50): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`not reached within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

/**
 * Issue 39 (the licence extra, and the messages like it): what an API-key client or an anonymous reader is told
 * names no path on the server. A library whose processing failed tells /v2/context why; on 0.7.10 that reason was
 * the raw error, `EEXIST: file already exists, mkdir '<data-dir>/work'`, data directory and all.
 */
let git: GitServer;
let server: TestServer;
let dataDir: string;
let key: string;

beforeAll(async () => {
  git = await startGitServer("ghp_failure-paths-token");
  dataDir = tempDirForFile("lds-failure-paths-");
  const init = await runCli("lds", ["init", "--team", "docs", "--email", "owner@paths.test", "--plan", "pro", "--json", "--data-dir", dataDir]);
  expect(init.exitCode, init.stderr).toBe(0);
  key = JSON.parse(init.stdout).key;
  const host = new URL(git.base).host;
  server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: host, LDS_GIT_DEFAULT_HOST: host, LDS_PUBLIC_READ: "true" });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await git?.close();
});

describe("failure reasons shown to API clients name no server path", () => {
  it("a library whose processing failed on the server's disk says so without the data directory's path; the log keeps it", async () => {
    const repo = await git.createRepo("public", "acme", "tidewater", fixtureDocs("tidewater"));
    // The work folder of ingestions is a file: the clone cannot start, with an error about a path of the volume.
    fs.rmSync(path.join(dataDir, "work"), { recursive: true, force: true });
    fs.writeFileSync(path.join(dataDir, "work"), "not a folder");
    const submitted = await fetch(`${server.url}/v2/add/repo/hostb`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ docsRepoUrl: repo.url }),
    });
    expect(submitted.status, await submitted.text()).toBe(200);
    await eventually(async () => libraryState(dataDir, "/acme/tidewater")?.state === "failed", 60_000);

    for (const reader of [client(server.url), keyed()]) {
      const answer = await reader.get("/v2/context?libraryId=/acme/tidewater&query=tides");
      expect(answer.json.error, answer.text).toBe("no_snippets_found");
      expect(answer.json.message).toMatch(/processing failed/);
      expect(answer.text).not.toContain(dataDir);
      expect(answer.text).not.toMatch(/\/work\b|EEXIST|ENOTDIR/);
    }
    // The operator still learns what went wrong, and where.
    expect(server.output()).toContain(path.join(dataDir, "work"));
  }, 120_000);

  it("a reason recorded before 0.7.11, quoting the data directory, is shown without it", async () => {
    const db = new Database(path.join(dataDir, "lds.db"));
    try {
      db.prepare("INSERT INTO libraries (id, title, source, source_url, private, state, state_reason) VALUES ('/acme/legacy', 'legacy', 'git', 'https://git.example.com/acme/legacy.git', 0, 'failed', ?)").run(
        `git clone failed: fatal: could not create work tree dir '${dataDir}/work/ingest-7': Permission denied.`,
      );
    } finally {
      db.close();
    }
    const answer = await keyed().get("/v2/context?libraryId=/acme/legacy&query=tides");
    expect(answer.json.error, answer.text).toBe("no_snippets_found");
    expect(answer.json.message).toContain("could not create work tree dir '<data volume>/work/ingest-7'");
    expect(answer.text).not.toContain(dataDir);
  });
});

function keyed() {
  const c = client(server.url);
  return { get: (route: string) => c.get(route, { authorization: `Bearer ${key}` }) };
}

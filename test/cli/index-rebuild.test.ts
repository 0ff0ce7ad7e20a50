import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadVectorExtension } from "../../src/index/sqlite/vector-index.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

const TOKEN = "ghp_index-rebuild-token";
const LIBRARIES = ["tidewater", "quarry", "ledgerline"];
/** bench/eval.js's question set: each question names its library. */
const QUESTIONS = (JSON.parse(fs.readFileSync(path.join(ROOT, "fixtures/docs/eval.json"), "utf8")) as { questions: Array<{ library: string; question: string }> }).questions;

let git: GitServer;
let dataDir: string;
let key: string;
const servers: TestServer[] = [];

async function cli(...args: string[]) {
  const r = await runCli("lds", [...args, "--data-dir", dataDir]);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
}

async function serve(): Promise<TestServer> {
  const server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host, LDS_GIT_DEFAULT_HOST: new URL(git.base).host });
  servers.push(server);
  return server;
}

async function stop(server: TestServer) {
  await server.stop();
  servers.splice(servers.indexOf(server), 1);
}

/** Every answer the index decides: each eval question's context (JSON and text), and library search by content. */
async function answers(server: TestServer): Promise<string[]> {
  const get = async (route: string) => {
    const response = await fetch(server.url + route, { headers: { authorization: `Bearer ${key}` } });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return `${route}\n${text}`;
  };
  const recorded: string[] = [];
  for (const { library, question } of QUESTIONS) {
    const query = new URLSearchParams({ libraryId: `/acme/${library}`, query: question });
    recorded.push(await get(`/v2/context?${query}&type=json`));
    recorded.push(await get(`/v2/context?${query}&type=txt&tokens=1500`));
  }
  // Libraries of one name match, ranked by their content's relevance to the query (the index's library relevance).
  for (const query of ["retry backoff", "ledger entries", "quarry migration"]) recorded.push(await get(`/v2/libs/search?${new URLSearchParams({ libraryName: "acme", query })}`));
  return recorded;
}

/** Counts straight from the files, as the engine sees them. */
function indexCounts(): { words: number; vectors: number; snippets: number } {
  const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
  const vectorsFile = path.join(dataDir, "vectors.db");
  try {
    const words = db.prepare("SELECT count(*) FROM snippets_fts WHERE snippets_fts MATCH 'request OR timeout OR retry'").pluck().get() as number;
    const snippets = db.prepare("SELECT count(*) FROM snippets").pluck().get() as number;
    if (!fs.existsSync(vectorsFile)) return { words, vectors: 0, snippets };
    const vectors = new Database(vectorsFile, { readonly: true });
    try {
      loadVectorExtension(vectors);
      return { words, vectors: vectors.prepare("SELECT count(*) FROM vec_snippets").pluck().get() as number, snippets };
    } finally {
      vectors.close();
    }
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  git = await startGitServer(TOKEN);
  dataDir = tempDirForFile("lds-index-rebuild-");
  await cli("teams", "create", "pro-team", "--plan", "pro");
  await cli("users", "add", "owner@pro.test", "--team", "pro-team", "--role", "owner");
  key = JSON.parse(await cli("keys", "create", "--email", "owner@pro.test", "--json")).key as string;
}, 60_000);

afterAll(async () => {
  for (const server of servers.splice(0)) await server.stop();
  await git?.close();
});

describe("lds index rebuild", () => {
  it("gives a volume whose index files were deleted the same answers as before, byte for byte", async () => {
    const first = await serve();
    for (const name of LIBRARIES) {
      const repo = await git.createRepo("public", "acme", name, fixtureDocs(name));
      const response = await fetch(first.url + "/v2/add/repo/hostb", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ docsRepoUrl: repo.url }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
    }
    for (const name of LIBRARIES)
      expect(await eventually(async () => ["finalized", "failed"].includes(libraryState(dataDir, `/acme/${name}`)?.state ?? "") && libraryState(dataDir, `/acme/${name}`)?.state, 60_000)).toBe("finalized");
    const before = await answers(first);

    // Not beside a running server: it would serve from an index being emptied.
    const refused = await runCli("lds", ["index", "rebuild", "--data-dir", dataDir]);
    expect(refused.exitCode, refused.stderr).toBe(5);
    expect(refused.stderr).toContain("in use by an LDS server");
    await stop(first);

    // The index lost: vectors.db deleted, and FTS5's index emptied (its content is lds.db's snippets, kept).
    const whole = indexCounts();
    expect(whole.words).toBeGreaterThan(0);
    expect(whole.vectors).toBe(whole.snippets);
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path.join(dataDir, `vectors.db${suffix}`), { force: true });
    const db = new Database(path.join(dataDir, "lds.db"));
    try {
      db.prepare("INSERT INTO snippets_fts (snippets_fts) VALUES ('delete-all')").run();
    } finally {
      db.close();
    }
    expect(indexCounts()).toEqual({ words: 0, vectors: 0, snippets: whole.snippets });

    const rebuilt = await runCli("lds", ["index", "rebuild", "--data-dir", dataDir, "--json"]);
    expect(rebuilt.exitCode, rebuilt.stderr).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ snippets: whole.snippets });
    expect(rebuilt.stderr).toContain(`${whole.snippets} of ${whole.snippets} snippets`);
    expect(indexCounts()).toEqual(whole);

    const second = await serve();
    const after = await answers(second);
    expect(after.length).toBe(before.length);
    for (let i = 0; i < before.length; i++) expect(after[i]).toBe(before[i]);
  }, 240_000);
});

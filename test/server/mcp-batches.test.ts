import { randomBytes } from "node:crypto";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { bodyOf, client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";

// Issue 39 item 5: a JSON-RPC batch on POST /mcp was charged as one request, and every query word of every call
// became a usage row kept a year.

const PRO_LIMIT = 20;
const ANONYMOUS_LIMIT = 20;

let git: GitServer;
let server: TestServer;
let dataDir: string;
const keys = { limited: "", heavy: "" };

async function cli(...args: string[]) {
  const r = await runCli("lds", [...args, "--data-dir", dataDir]);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
}

function sql(statement: string, ...params: unknown[]): any[] {
  const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
  try {
    db.pragma("busy_timeout = 5000");
    return db.prepare(statement).all(...params);
  } finally {
    db.close();
  }
}

/** A word no query has used: lower-case letters only, so that it is a topic word. */
const randomWord = () => "z" + [...randomBytes(9)].map((b) => String.fromCharCode(97 + (b % 26))).join("");

const queryDocs = (id: number, libraryId: string, query: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "query-docs", arguments: { libraryId, query, tokens: 300 } } });

async function postMcp(key: string | null, body: unknown) {
  const response = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  const { text, json } = await bodyOf(response);
  const header = (name: string) => response.headers.get(name);
  return { status: response.status, json, text, remaining: Number(header("ratelimit-remaining")), header };
}

beforeAll(async () => {
  git = await startGitServer("unused");
  dataDir = tempDirForFile("lds-mcp-batches-");
  await cli("teams", "create", "limited", "--plan", "pro");
  await cli("teams", "create", "heavy", "--plan", "enterprise");
  await cli("users", "add", "owner@limited.test", "--team", "limited", "--role", "owner");
  await cli("users", "add", "owner@heavy.test", "--team", "heavy", "--role", "owner");
  const key = async (email: string) => JSON.parse(await cli("keys", "create", "--email", email, "--json")).key as string;
  keys.limited = await key("owner@limited.test");
  keys.heavy = await key("owner@heavy.test");
  const host = new URL(git.base).host;
  const repos = [await git.createRepo("public", "acme", "tidewater", fixtureDocs("tidewater")), await git.createRepo("public", "acme", "quarry", fixtureDocs("quarry"))];
  server = await startServer(dataDir, {
    LDS_GIT_ALLOW_HTTP_HOSTS: host,
    LDS_GIT_DEFAULT_HOST: host,
    LDS_RATE_LIMIT_PRO: String(PRO_LIMIT),
    LDS_PUBLIC_READ: "true",
    LDS_RATE_LIMIT_ANONYMOUS: String(ANONYMOUS_LIMIT),
  });
  for (const repo of repos) {
    const r = await fetch(`${server.url}/v2/add/repo/hostb`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys.heavy}` },
      body: JSON.stringify({ docsRepoUrl: repo.url }),
    });
    expect(r.status).toBe(200);
  }
  await eventually(async () => sql("SELECT id FROM libraries WHERE state = 'finalized'").length === 2, 90_000);
}, 150_000);

afterAll(async () => {
  await server?.stop();
  await git?.close();
});

describe("POST /mcp with a JSON-RPC batch (issue 39)", () => {
  it("charges each message against the key's rate limit, and refuses whole a batch larger than what is left", async () => {
    const first = await postMcp(keys.limited, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(first.status, first.text).toBe(200);
    const left = first.remaining;
    expect(left).toBeGreaterThan(10);

    const five = await postMcp(
      keys.limited,
      Array.from({ length: 5 }, (_, i) => queryDocs(10 + i, "/acme/quarry", `quarry ${randomWord()}`)),
    );
    expect(five.status, five.text).toBe(200);
    expect(five.json).toHaveLength(5);
    expect(five.json.every((m: any) => m.result && !m.result.isError)).toBe(true);
    expect(five.remaining).toBe(left - 5);

    // One more message than is left: nothing runs, and the refusal says so with the usual headers.
    const refusedWords = Array.from({ length: left - 5 + 1 }, randomWord);
    const tooMany = await postMcp(
      keys.limited,
      refusedWords.map((word, i) => queryDocs(100 + i, "/acme/quarry", word)),
    );
    expect(tooMany.status, tooMany.text).toBe(429);
    expect(tooMany.json.error).toBe("rate_limit_exceeded");
    expect(tooMany.json.message).toMatch(/batch of \d+ JSON-RPC messages counts as \d+ requests/);
    expect(tooMany.header("retry-after")).toMatch(/^\d+$/);
    expect(tooMany.header("ratelimit-limit")).toBe(String(PRO_LIMIT));
    // The HTTP request itself counted once; the batch did not.
    expect(tooMany.remaining).toBe(left - 5 - 1);

    // Exactly what is left still goes through, and then nothing does.
    const marker = randomWord();
    const rest = await postMcp(
      keys.limited,
      Array.from({ length: tooMany.remaining }, (_, i) => queryDocs(200 + i, "/acme/quarry", `${marker} quarry`)),
    );
    expect(rest.status, rest.text).toBe(200);
    expect(rest.remaining).toBe(0);
    expect((await postMcp(keys.limited, { jsonrpc: "2.0", id: 2, method: "tools/list" })).status).toBe(429);

    // None of the refused batch's calls ran: its words never reached the usage counters, the later batch's did.
    await eventually(async () => sql("SELECT 1 FROM library_usage WHERE dimension = 'topic' AND name = ?", marker).length === 1, 30_000);
    const placeholders = refusedWords.map(() => "?").join(", ");
    expect(sql(`SELECT name FROM library_usage WHERE name IN (${placeholders})`, ...refusedWords)).toEqual([]);
  });

  it("charges anonymous reads per message too, by client address", async () => {
    const first = await postMcp(null, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(first.status, first.text).toBe(200);
    const three = await postMcp(
      null,
      [1, 2, 3].map((id) => ({ jsonrpc: "2.0", id, method: "tools/list" })),
    );
    expect(three.status, three.text).toBe(200);
    expect(three.remaining).toBe(first.remaining - 3);
    const refused = await postMcp(
      null,
      Array.from({ length: three.remaining + 1 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })),
    );
    expect(refused.status).toBe(429);
    expect(refused.json.error).toBe("rate_limit_exceeded");
  });

  it("refuses an empty batch and one of more than 20 messages with 400 validation_error", async () => {
    const tooLong = await postMcp(
      keys.heavy,
      Array.from({ length: 21 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })),
    );
    expect(tooLong.status, tooLong.text.slice(0, 300)).toBe(400);
    expect(tooLong.json).toMatchObject({ error: "validation_error" });
    expect(tooLong.json.message).toContain("1 to 20 messages; this one holds 21");
    const empty = await postMcp(keys.heavy, []);
    expect(empty.status, empty.text.slice(0, 300)).toBe(400);
    expect(empty.json.error).toBe("validation_error");
    // Twenty still work.
    const twenty = await postMcp(
      keys.heavy,
      Array.from({ length: 20 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })),
    );
    expect(twenty.status, twenty.text).toBe(200);
    expect(twenty.json).toHaveLength(20);
  });
});

describe("usage counters of random query words (issue 39)", () => {
  it("keep at most 50 distinct topics and 20 MCP client names per library and day, and keep counting the rest", async () => {
    const library = "/acme/tidewater";
    // 20 MCP calls and 25 API calls of eight words each: 45 requests, 316 distinct words, 25 client names.
    const batch = await postMcp(
      keys.heavy,
      Array.from({ length: 20 }, (_, i) => queryDocs(i, library, ["retries", ...Array.from({ length: 7 }, randomWord)].join(" "))),
    );
    expect(batch.status, batch.text).toBe(200);
    expect(batch.json.every((m: any) => m.result && !m.result.isError)).toBe(true);
    const api = client(server.url);
    for (let i = 0; i < 25; i++) {
      const query = encodeURIComponent(["retries", ...Array.from({ length: 7 }, randomWord)].join(" "));
      const r = await api.get(`/v2/context?libraryId=${library}&query=${query}&tokens=300`, {
        authorization: `Bearer ${keys.heavy}`,
        "x-context7-source": "mcp-server",
        "x-context7-client-ide": `ide-${randomWord()}`,
      });
      expect(r.status, r.text).toBe(200);
    }
    // Every request is counted (the client kind), whatever happened to its words.
    await eventually(async () => Number(sql("SELECT coalesce(sum(count), 0) AS n FROM library_usage WHERE library_id = ? AND dimension = 'client'", library)[0].n) === 45, 30_000);

    const perDay = sql("SELECT day, dimension, count(*) AS names FROM library_usage WHERE library_id = ? GROUP BY day, dimension", library);
    const names = (dimension: string) => perDay.filter((r) => r.dimension === dimension).reduce((sum, r) => sum + r.names, 0);
    for (const row of perDay) if (row.dimension === "topic") expect(row.names).toBeLessThanOrEqual(50);
    for (const row of perDay) if (row.dimension === "mcpClient") expect(row.names).toBeLessThanOrEqual(20);
    // Unless the day changed mid-test, the caps are reached exactly.
    if (perDay.filter((r) => r.dimension === "topic").length === 1) {
      expect(names("topic")).toBe(50);
      expect(names("mcpClient")).toBe(20);
    }
    // A topic stored before the cap keeps counting: every request asked about retries.
    const metrics = await api.get(`/v2/libs/metrics?libraryId=${library}&days=2`, { authorization: `Bearer ${keys.heavy}` });
    expect(metrics.status, metrics.text).toBe(200);
    expect(metrics.json.topTopics[0]).toEqual({ topic: "retries", count: 45 });
    expect(metrics.json.totalRequests).toBe(45);
  });
});

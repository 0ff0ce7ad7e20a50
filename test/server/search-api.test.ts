import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

const TOKEN = "ghp_search-tests-token";
const DUPLICATE = '```js\nconst api = createClient({ baseUrl: "https://dup.example" });\n```';

let git: GitServer;
let server: TestServer;
let dataDir: string;
const keys: Record<"pro" | "free" | "restricted", string> = { pro: "", free: "", restricted: "" };

async function cli(...args: string[]) {
  const r = await runCli("lds", [...args, "--data-dir", dataDir], { LDS_GIT_TOKEN: TOKEN });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
}

/** GET with the pro team's key, another key, or none (null). */
async function get(route: string, key: string | null = keys.pro) {
  const r = await client(server.url).get(route, key ? { authorization: `Bearer ${key}` } : {});
  return { ...r, type: r.headers.get("content-type") ?? "" };
}

const state = (id: string) => libraryState(dataDir, id)?.state;

async function submit(url: string, key: string, extra: Record<string, unknown> = {}) {
  const response = await fetch(server.url + "/v2/add/repo/hostb", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ docsRepoUrl: url, ...extra }),
  });
  const body = (await response.json()) as { libraryName: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.libraryName;
}

const finalized = (id: string) => eventually(async () => ["finalized", "failed"].includes(state(id) ?? "") && state(id), 30_000);

beforeAll(async () => {
  git = await startGitServer(TOKEN);
  dataDir = tempDirForFile("lds-search-");
  await cli("teams", "create", "pro-team", "--plan", "pro");
  await cli("teams", "create", "free-team", "--plan", "free");
  await cli("teams", "create", "locked-team", "--plan", "pro");
  await cli("teams", "restrict", "locked-team", "/acme/quarry");
  await cli("users", "add", "owner@pro.test", "--team", "pro-team", "--role", "owner");
  await cli("users", "add", "owner@free.test", "--team", "free-team", "--role", "owner");
  await cli("users", "add", "owner@locked.test", "--team", "locked-team", "--role", "owner");
  const key = async (email: string) => JSON.parse(await cli("keys", "create", "--email", email, "--json")).key as string;
  keys.pro = await key("owner@pro.test");
  keys.free = await key("owner@free.test");
  keys.restricted = await key("owner@locked.test");

  // Tidewater: tagged v1.0, then a section added on main that v1.0 does not have; two files repeat one code block.
  const tidewater = await git.createRepo("public", "acme", "tidewater", {
    ...fixtureDocs("tidewater"),
    "docs/dup-a.md": `# Duplicated A\n\nThe same example appears in two pages of this repository.\n\n${DUPLICATE}\n`,
    "docs/dup-b.md": `# Duplicated B\n\nThe same example appears in two pages of this repository.\n\n${DUPLICATE}\n`,
  });
  await tidewater.tag("v1.0");
  await tidewater.commit({
    "docs/http3.md":
      "# HTTP/3\n\n## Enabling QUIC transport\n\nTidewater 2 can speak HTTP/3 over QUIC when the server advertises it with Alt-Svc.\n\n```js\nconst api = createClient({ baseUrl, http3: true });\n```\n",
  });
  const quarry = await git.createRepo("public", "acme", "quarry", fixtureDocs("quarry"));
  // A fork with the same name but another library's content: the query decides between the two.
  const fork = await git.createRepo("public", "zeta", "quarry", fixtureDocs("tidewater"));
  const extras = await git.createRepo("public", "acme", "tidewater-extras", { "README.md": "# Tidewater extras\n\nPlugins for Tidewater: caching, metrics and request logging, each in its own module.\n" });
  const ledger = await git.createRepo("private", "acme", "ledgerline", fixtureDocs("ledgerline"));
  const empty = await git.createRepo("public", "acme", "empty", { "src/index.js": "export const x = 1;\n" });

  server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host, LDS_GIT_DEFAULT_HOST: new URL(git.base).host });
  for (const url of [tidewater.url, quarry.url, fork.url, extras.url, empty.url]) await submit(url, keys.free);
  await submit(ledger.url, keys.pro, { private: true, gitToken: TOKEN });
  for (const id of ["/acme/tidewater", "/acme/quarry", "/zeta/quarry", "/acme/tidewater-extras", "/~team-1/acme/ledgerline", "/acme/empty"]) await finalized(id);
  // The pinned version is indexed by an operator, beside the running server.
  await cli("ingest", "git", tidewater.url, "--tag", "v1.0", "--allow-http-host", new URL(git.base).host);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await git?.close();
});

describe("GET /v2/libs/search", () => {
  it("answers the hosted service's result shape, exact name first, with versions", async () => {
    const r = await get("/v2/libs/search?libraryName=tidewater&query=retry%20backoff");
    expect(r.status, r.text).toBe(200);
    // The fork /zeta/quarry holds Tidewater's README: its description names it, so it comes last (issue 13).
    expect(r.json.results.map((l: { id: string }) => l.id)).toEqual(["/acme/tidewater", "/acme/tidewater-extras", "/zeta/quarry"]);
    const [first] = r.json.results;
    expect(first).toMatchObject({ id: "/acme/tidewater", title: "tidewater", branch: "main", state: "finalized", versions: ["v1.0"] });
    expect(first.totalSnippets).toBeGreaterThan(20);
    expect(first.totalTokens).toBeGreaterThan(first.totalSnippets);
    expect(Date.parse(first.lastUpdateDate)).toBeGreaterThan(Date.now() - 600_000);
    expect(Object.keys(first).sort()).toEqual(["benchmarkScore", "branch", "description", "id", "lastUpdateDate", "stars", "state", "title", "totalSnippets", "totalTokens", "trustScore", "versions"]);
    expect(r.json.searchFilterApplied).toBe(false);
    // The description is the README's first paragraph; the scores are computed as docs/api.md says.
    expect(first.description).toBe(
      "Tidewater is a small HTTP client for Node.js with retries, timeouts, interceptors and streaming built in. It has no runtime dependencies and works with any server that speaks HTTP/1.1 or HTTP/2.",
    );
    expect(first).toMatchObject({ trustScore: 10, stars: -1, benchmarkScore: Math.round(25 * Math.log10(1 + first.totalSnippets)) });
  });

  it("finds a library by the words of its description, and takes names up to 500 characters", async () => {
    const r = await get("/v2/libs/search?libraryName=request%20logging%20caching");
    expect(r.status, r.text).toBe(200);
    expect(r.json.results.map((l: { id: string }) => l.id)).toEqual(["/acme/tidewater-extras"]);
    expect(r.json.results[0].description).toBe("Plugins for Tidewater: caching, metrics and request logging, each in its own module.");
    expect((await get(`/v2/libs/search?libraryName=${"x".repeat(500)}`)).status).toBe(404);
    expect((await get(`/v2/libs/search?libraryName=${"x".repeat(501)}`)).status).toBe(400);
  });

  it("ranks libraries of equal name match by how well their content answers the query", async () => {
    const jobs = await get("/v2/libs/search?libraryName=quarry&query=dead%20letter%20queue%20for%20failed%20jobs");
    expect(jobs.status, jobs.text).toBe(200);
    expect(jobs.json.results.map((l: { id: string }) => l.id)).toEqual(["/acme/quarry", "/zeta/quarry"]);
    const http = await get("/v2/libs/search?libraryName=quarry&query=connect%20timeout%20of%20a%20request");
    expect(http.json.results.map((l: { id: string }) => l.id)).toEqual(["/zeta/quarry", "/acme/quarry"]);
  });

  it("lists a private library to its team only, and a restricted team only its allowed libraries", async () => {
    expect((await get("/v2/libs/search?libraryName=ledgerline", keys.pro)).json.results[0].id).toBe("/~team-1/acme/ledgerline");
    const other = await get("/v2/libs/search?libraryName=ledgerline", keys.free);
    expect(other.status).toBe(404);
    expect(other.json).toMatchObject({ error: "no_libraries_found" });
    const restricted = await get("/v2/libs/search?libraryName=quarry", keys.restricted);
    expect(restricted.json.results.map((l: { id: string }) => l.id)).toEqual(["/acme/quarry"]);
    expect(restricted.json.searchFilterApplied).toBe(true);
  });

  it("answers 404 no_libraries_found, 400 validation_error and 401 invalid_api_key", async () => {
    const none = await get("/v2/libs/search?libraryName=no-such-thing-anywhere");
    expect(none.status).toBe(404);
    expect(none.json.error).toBe("no_libraries_found");
    expect(none.json.message).toContain("no-such-thing-anywhere");
    const missing = await get("/v2/libs/search?query=hooks");
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ error: "validation_error" });
    expect(missing.json.message).toContain("libraryName");
    expect((await get("/v2/libs/search?libraryName=tidewater", null)).status).toBe(401);
  });
});

describe("GET /v2/context", () => {
  /** JSON unless the test names a type: text is the default (issue 13), JSON what these tests read. */
  const context = (query: string) => `/v2/context?${new URLSearchParams(/(^|&)type=/.test(query) ? query : `${query}&type=json`).toString()}`;

  it("answers code and info snippets ranked for the query, in the hosted service's JSON shape", async () => {
    const r = await get(context("libraryId=/acme/tidewater&query=exponential backoff with jitter between retry attempts&tokens=1500"));
    expect(
      r.status,
      server
        .output()
        .split("\n")
        .filter((l) => l.includes('"level":50'))
        .join("\n"),
    ).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(["codeSnippets", "infoSnippets"]);
    const [code] = r.json.codeSnippets;
    expect(code.codeId).toBe("docs/retries.md#exponential-backoff");
    expect(code).toMatchObject({ codeTitle: "Exponential backoff", codeLanguage: "js", pageTitle: "Retries" });
    expect(code.codeDescription).toMatch(/jitter/);
    expect(code.codeList).toEqual([{ language: "js", code: expect.stringContaining("baseDelayMs: 200") }]);
    // The prose that describes a code block is not sent a second time as an info snippet (issue 11).
    const descriptions = r.json.codeSnippets.map((c: { codeDescription: string }) => c.codeDescription).filter(Boolean);
    for (const info of r.json.infoSnippets as Array<{ content: string; breadcrumb: string }>) {
      for (const description of descriptions) expect(info.content.replace(/\s+/g, " "), info.breadcrumb).not.toContain(description);
    }
  });

  it("never exceeds the token budget, and a larger budget brings more snippets", async () => {
    const sizes: number[] = [];
    for (const tokens of [150, 600, 5000]) {
      const r = await get(context(`libraryId=/acme/tidewater&query=how do I configure timeouts&tokens=${tokens}`));
      expect(r.status).toBe(200);
      const used = [...r.json.codeSnippets.map((s: any) => s.codeTokens), ...r.json.infoSnippets.map((s: any) => s.contentTokens)];
      expect(used.reduce((a: number, b: number) => a + b, 0)).toBeLessThanOrEqual(tokens);
      sizes.push(used.length);
    }
    expect(sizes[0]).toBeGreaterThan(0);
    expect(sizes[1]).toBeGreaterThan(sizes[0]!);
    expect(sizes[2]).toBeGreaterThan(sizes[1]!);
    const tooSmall = await get(context("libraryId=/acme/tidewater&query=timeouts&tokens=5"));
    expect(tooSmall.status).toBe(400);
    expect(tooSmall.json.message).toContain("tokens");
  });

  it("removes exact duplicates", async () => {
    const r = await get(context("libraryId=/acme/tidewater&query=dup.example createClient same example&tokens=5000"));
    const copies = r.json.codeSnippets.filter((s: any) => s.codeList[0].code.includes("dup.example"));
    expect(copies).toHaveLength(1);
  });

  it("renders type=txt as readable text with title, source, description and fenced code", async () => {
    const r = await get(context("libraryId=/acme/tidewater&query=server-sent events reconnect&type=txt&tokens=800"));
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/plain/);
    expect(r.text).toContain("### Server-sent events");
    expect(r.text).toContain("Source: docs/streaming.md#server-sent-events");
    expect(r.text).toMatch(/```js\nfor await \(const event of api\.events/);
  });

  it("pins a version as /owner/repo/<v> or @<v>, and lists the available ones for an unknown version", async () => {
    const current = await get(context("libraryId=/acme/tidewater&query=HTTP/3 QUIC transport&tokens=5000"));
    expect(current.text).toContain("docs/http3.md");
    for (const id of ["/acme/tidewater/v1.0", "/acme/tidewater@v1.0"]) {
      const pinned = await get(context(`libraryId=${id}&query=HTTP/3 QUIC transport&tokens=5000`));
      expect(pinned.status).toBe(200);
      expect(pinned.text).not.toContain("docs/http3.md");
      expect(pinned.json.codeSnippets.length).toBeGreaterThan(0);
    }
    const unknown = await get(context("libraryId=/acme/tidewater/v9.9&query=retries"));
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe("tag_not_found");
    expect(unknown.json.message).toContain("available versions: v1.0");
  });

  it("answers every error of the spec that applies: 400, 403, 404", async () => {
    const cases: Array<[string, string | null, number, string]> = [
      ["libraryId=react&query=hooks", keys.pro, 400, "invalid_library_id"],
      ["libraryId=/acme/tidewater", keys.pro, 400, "validation_error"],
      ["libraryId=/acme/tidewater&query=x&type=xml", keys.pro, 400, "validation_error"],
      ["libraryId=/nobody/nothing&query=x", keys.pro, 404, "library_not_found"],
      // Another team's private library does not exist for this caller (not "forbidden": that would reveal it).
      ["libraryId=/~team-1/acme/ledgerline&query=read rows", keys.free, 404, "library_not_found"],
      ["libraryId=/acme/tidewater&query=retries", keys.restricted, 403, "access_denied"],
      ["libraryId=/acme/empty&query=anything", keys.pro, 404, "no_snippets_found"],
      ["libraryId=/acme/tidewater&query=retries", "ldssk-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 401, "invalid_api_key"],
    ];
    for (const [query, key, status, error] of cases) {
      const r = await get(context(query), key);
      expect({ query, status: r.status, error: r.json?.error }).toEqual({ query, status, error });
      expect(typeof r.json.message).toBe("string");
    }
    const empty = await get(context("libraryId=/acme/empty&query=anything"));
    expect(empty.json.message).toMatch(/processing failed: no_snippets_found: No documentation snippets .* no Markdown/);
    // The private library answers its own team.
    expect((await get(context("libraryId=/~team-1/acme/ledgerline&query=read rows as dictionaries"), keys.pro)).json.codeSnippets[0].codeId).toBe("docs/reading.md#reading-rows-as-dictionaries");
  });
});

describe("the hosted service's clients (issue 13)", () => {
  it("find the public API under /api too, with the same answers and the same rate-limit counter", async () => {
    const plain = await get("/v2/libs/search?libraryName=tidewater");
    const prefixed = await get("/api/v2/libs/search?libraryName=tidewater");
    expect(prefixed.status, prefixed.text).toBe(200);
    expect(prefixed.json).toEqual(plain.json);
    // One counter for both paths: the second request counted one more against the same key.
    expect(Number(prefixed.headers.get("ratelimit-remaining"))).toBe(Number(plain.headers.get("ratelimit-remaining")) - 1);
    const ctx = await get("/api/v2/context?libraryId=/acme/tidewater&query=retries&type=json");
    expect(ctx.status).toBe(200);
    expect(ctx.json.codeSnippets.length).toBeGreaterThan(0);
    const refresh = await fetch(`${server.url}/api/v1/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys.pro}`, origin: "https://elsewhere.example" },
      body: JSON.stringify({ libraryName: "/nobody/nothing" }),
    });
    // The bearer-key API under /api is not the cookie-authenticated admin API: no same-origin check, its own 404.
    expect(refresh.status).toBe(404);
    expect(((await refresh.json()) as { error: string }).error).toBe("library_not_found");
    expect((await get("/api/v2/libs/search?libraryName=tidewater", null)).status).toBe(401);
  });

  it("get text from /v2/context when they name no type, as the hosted service answers", async () => {
    const r = await get("/v2/context?libraryId=/acme/tidewater&query=server-sent%20events%20reconnect&tokens=800");
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/plain/);
    expect(r.text).toContain("Source: docs/streaming.md#server-sent-events");
  });

  it("answer 202 library_not_finalized for a library whose first processing runs, in the type they asked for", async () => {
    const db = new Database(path.join(dataDir, "lds.db"));
    try {
      db.pragma("busy_timeout = 5000");
      db.prepare("INSERT INTO libraries (id, title, source, state) VALUES ('/acme/brewing', 'brewing', 'git', 'fetching')").run();
    } finally {
      db.close();
    }
    const json = await get("/v2/context?libraryId=/acme/brewing&query=anything&type=json");
    expect(json.status).toBe(202);
    expect(json.json).toMatchObject({ error: "library_not_finalized", message: expect.stringContaining("still being processed (fetching)") });
    const text = await get("/api/v2/context?libraryId=/acme/brewing&query=anything");
    expect(text.status).toBe(202);
    expect(text.type).toMatch(/^text\/plain/);
    expect(text.text).toMatch(/^\/acme\/brewing is still being processed/);
    // A library whose processing found nothing stays 404 no_snippets_found.
    expect((await get("/v2/context?libraryId=/acme/empty&query=anything&type=json")).json.error).toBe("no_snippets_found");
  });

  it("send the key as Context7-API-Key or X-API-Key, and get WWW-Authenticate with a 401", async () => {
    for (const header of ["context7-api-key", "x-api-key"]) {
      const r = await client(server.url).get("/api/v2/libs/search?libraryName=tidewater", { [header]: keys.pro });
      expect({ header, status: r.status }).toEqual({ header, status: 200 });
    }
    const wrong = await client(server.url).get("/v2/libs/search?libraryName=tidewater", { "x-api-key": "ldssk-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer realm="LDS"');
    const mcp = await fetch(`${server.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toBe('Bearer realm="LDS"');
  });
});

describe("the MCP endpoint", () => {
  const connect = async (key: string | null) => {
    const client = new Client({ name: "lds-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(server.url + "/mcp"), {
      requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
    });
    await client.connect(transport);
    return client;
  };
  const text = (result: any) => (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");

  it("an SDK client session resolves a library name and fetches its docs", async () => {
    const client = await connect(keys.pro);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["query-docs", "resolve-library-id"]);
      const resolved = await client.callTool({ name: "resolve-library-id", arguments: { libraryName: "tidewater", query: "retries" } });
      expect(resolved.isError).toBeFalsy();
      expect(text(resolved)).toContain("- Library ID: /acme/tidewater");
      expect(text(resolved)).toContain("- Versions: v1.0");
      // "Code Snippets" counts code only (issue 11: it counted prose sections too).
      const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
      const codeCount = db.prepare("SELECT count(*) FROM snippets WHERE library_id = '/acme/tidewater' AND version = '' AND kind = 'code'").pluck().get();
      const allCount = db.prepare("SELECT count(*) FROM snippets WHERE library_id = '/acme/tidewater' AND version = ''").pluck().get();
      db.close();
      expect(codeCount).not.toBe(allCount);
      expect(text(resolved)).toContain(`- Code Snippets: ${codeCount}\n`);
      const id = /Library ID: (\S+)/.exec(text(resolved))![1]!;
      const docs = await client.callTool({ name: "query-docs", arguments: { libraryId: id, query: "how do I add an authorization header to every request", tokens: 1200 } });
      expect(docs.isError).toBeFalsy();
      expect(text(docs)).toContain("Source: docs/interceptors.md#request-interceptors");
      expect(text(docs)).toContain('request.headers.set("Authorization"');
      const pinned = await client.callTool({ name: "query-docs", arguments: { libraryId: "/acme/tidewater@v9", query: "retries" } });
      expect(pinned.isError).toBe(true);
      expect(text(pinned)).toMatch(/^tag_not_found: .*available versions: v1\.0/);
      const own = await client.callTool({ name: "query-docs", arguments: { libraryId: "/~team-1/acme/ledgerline", query: "read rows as dictionaries" } });
      expect(text(own)).toContain("Source: docs/reading.md#reading-rows-as-dictionaries");
    } finally {
      await client.close();
    }
    // Another team's private library does not exist for it, over MCP as over the API.
    const other = await connect(keys.free);
    try {
      const hidden = await other.callTool({ name: "query-docs", arguments: { libraryId: "/~team-1/acme/ledgerline", query: "read rows" } });
      expect(hidden.isError).toBe(true);
      expect(text(hidden)).toMatch(/^library_not_found:/);
    } finally {
      await other.close();
    }
  });

  it("takes the argument names agents send besides the documented ones, lists empty prompts and resources, and promises no notifications", async () => {
    const client = await connect(keys.pro);
    try {
      expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false }, prompts: { listChanged: false }, resources: { listChanged: false } });
      expect((await client.listPrompts()).prompts).toEqual([]);
      expect((await client.listResources()).resources).toEqual([]);
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
      const aliased = await client.callTool({ name: "query-docs", arguments: { context7CompatibleLibraryID: "/acme/tidewater", userQuery: "server-sent events reconnect" } });
      expect(aliased.isError, text(aliased)).toBeFalsy();
      expect(text(aliased)).toContain("Source: docs/streaming.md#server-sent-events");
      const byLibraryID = await client.callTool({ name: "query-docs", arguments: { libraryID: "/acme/tidewater", question: "retries" } });
      expect(byLibraryID.isError, text(byLibraryID)).toBeFalsy();
      const resolved = await client.callTool({ name: "resolve-library-id", arguments: { libraryName: "tidewater", userQuery: "retries" } });
      expect(text(resolved)).toContain("- Library ID: /acme/tidewater");
      const invalid = await client.callTool({ name: "query-docs", arguments: { query: "retries" } });
      expect(invalid.isError).toBe(true);
      expect(text(invalid)).toMatch(/^validation_error: libraryId: /);
    } finally {
      await client.close();
    }
  });

  it("refuses a session without a valid API key, and methods other than POST", async () => {
    await expect(connect(null)).rejects.toThrow(/401|invalid_api_key/);
    await expect(connect("ldssk-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).rejects.toThrow(/401|invalid_api_key/);
    const r = await get("/mcp");
    expect(r.status).toBe(405);
    expect(r.json.error).toBe("method_not_allowed");
  });
});

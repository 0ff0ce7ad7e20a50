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

let git: GitServer;
let server: TestServer;
let dataDir: string;
const keys = { owner: "", member: "", other: "", free: "" };

async function cli(...args: string[]) {
  const r = await runCli("lds", [...args, "--data-dir", dataDir]);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
}

function sql(statement: string, ...params: unknown[]) {
  const db = new Database(path.join(dataDir, "lds.db"));
  try {
    db.pragma("busy_timeout = 5000");
    const prepared = db.prepare(statement);
    return prepared.reader ? prepared.all(...params) : (prepared.run(...params), []);
  } finally {
    db.close();
  }
}

const api = (key: string | null) => {
  const c = client(server.url);
  const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  return {
    get: (route: string, headers: Record<string, string> = {}) => c.get(route, { ...auth, ...headers }),
    patch: (route: string, body: unknown, type = "application/json") =>
      fetch(server.url + route, { method: "PATCH", headers: { ...auth, "content-type": type }, body: typeof body === "string" ? body : JSON.stringify(body) }).then(async (r) => ({
        status: r.status,
        json: (await r.json()) as any,
      })),
  };
};

beforeAll(async () => {
  git = await startGitServer("unused");
  dataDir = tempDirForFile("lds-policies-");
  await cli("teams", "create", "acme", "--plan", "pro");
  await cli("teams", "create", "others", "--plan", "pro");
  await cli("teams", "create", "small", "--plan", "free");
  await cli("users", "add", "owner@acme.test", "--team", "acme", "--role", "owner");
  await cli("users", "add", "member@acme.test", "--team", "acme", "--role", "member");
  await cli("users", "add", "someone@others.test", "--team", "others", "--role", "owner");
  await cli("users", "add", "owner@small.test", "--team", "small", "--role", "owner");
  const key = async (email: string) => JSON.parse(await cli("keys", "create", "--email", email, "--json")).key as string;
  keys.owner = await key("owner@acme.test");
  keys.member = await key("member@acme.test");
  keys.other = await key("someone@others.test");
  keys.free = await key("owner@small.test");
  const host = new URL(git.base).host;
  const repos = [await git.createRepo("public", "acme", "tidewater", fixtureDocs("tidewater")), await git.createRepo("public", "acme", "quarry", fixtureDocs("quarry"))];
  server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: host, LDS_GIT_DEFAULT_HOST: host, LDS_RATE_LIMIT_FREE: "15" });
  for (const repo of repos) {
    const r = await fetch(`${server.url}/v2/add/repo/hostb`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys.owner}` },
      body: JSON.stringify({ docsRepoUrl: repo.url }),
    });
    expect(r.status).toBe(200);
  }
  await eventually(async () => sql("SELECT state FROM libraries WHERE state = 'finalized'").length === 2, 60_000);
  // A wiki space of team acme (1), as a wiki ingestion leaves it: for the source-type rules.
  sql(
    "INSERT INTO libraries (id, team_id, title, description, private, source, source_url, state) VALUES ('/~team-1/wiki/eng', 1, 'Engineering wiki', 'Tidewater runbooks', 1, 'wiki', 'confluence://c1/ENG', 'finalized')",
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await git?.close();
});

describe("access policies: GET and PATCH /v2/policies (issue 13)", () => {
  it("show an open policy to a team owner, with the libraries its keys may use", async () => {
    const r = await api(keys.owner).get("/v2/policies");
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ sourceTypes: ["git", "wiki"], libraries: { allow: null, deny: [] }, restrictive: false, accessibleLibraryCount: 3 });
    // Another team does not see acme's wiki space.
    expect((await api(keys.other).get("/api/v2/policies")).json.accessibleLibraryCount).toBe(2);
  });

  it("answer 401 without a key, 403 to a member, 400 to a malformed policy, and change nothing then", async () => {
    expect((await api(null).get("/v2/policies")).status).toBe(401);
    expect((await api(null).patch("/v2/policies", { sourceTypes: ["git"] })).status).toBe(401);
    const member = await api(keys.member).get("/v2/policies");
    expect(member.status).toBe(403);
    expect(member.json.error).toBe("forbidden");
    expect((await api(keys.member).patch("/v2/policies", { sourceTypes: ["git"] })).status).toBe(403);
    for (const body of [{ sourceTypes: ["svn"] }, { libraries: { allow: ["no-slash"] } }, { libraries: { deny: "/acme/*" } }, { colour: "red" }, [1, 2], { libraries: { allow: ["/a/../b"] } }]) {
      const r = await api(keys.owner).patch("/v2/policies", body);
      expect({ body, status: r.status, error: r.json.error }).toEqual({ body, status: 400, error: "validation_error" });
      expect(r.json.message).toMatch(/^The policy is not valid: /);
    }
    expect((await api(keys.owner).get("/v2/policies")).json.restrictive).toBe(false);
  });

  it("once changed, are enforced in search, context, metrics, MCP and refresh, and say so in search results", async () => {
    const patched = await api(keys.owner).patch("/v2/policies", { libraries: { allow: ["/acme/*"], deny: ["/acme/tide*"] } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ libraries: { allow: ["/acme/*"], deny: ["/acme/tide*"] }, restrictive: true, accessibleLibraryCount: 1 });
    const owner = api(keys.owner);
    const quarry = await owner.get("/v2/libs/search?libraryName=quarry");
    expect(quarry.json).toMatchObject({ results: [{ id: "/acme/quarry" }], searchFilterApplied: true });
    expect((await owner.get("/v2/libs/search?libraryName=tidewater")).json.error).toBe("no_libraries_found");
    const denied = await owner.get("/v2/context?libraryId=/acme/tidewater&query=retries&type=json");
    expect(denied.status).toBe(403);
    expect(denied.json.error).toBe("access_denied");
    // Usage metrics follow the same rule as context (issue 39): a library the policy does not allow is refused,
    // be it public (/acme/tidewater, denied) or the team's own private one (not in the allow list).
    for (const route of ["/v2/libs/metrics?libraryId=/acme/tidewater", "/api/v2/libs/metrics?libraryId=/~team-1/wiki/eng&days=7"]) {
      const refused = await owner.get(route);
      expect({ route, status: refused.status, error: refused.json.error }).toEqual({ route, status: 403, error: "access_denied" });
      expect(refused.json.message).toMatch(/is not allowed by your team's access policy/);
      expect(refused.json).not.toHaveProperty("daily");
    }
    expect((await owner.get("/v2/libs/metrics?libraryId=/acme/quarry")).status).toBe(200);
    // Another team's policy is its own: the same library's metrics stay open to it.
    expect((await api(keys.other).get("/v2/libs/metrics?libraryId=/acme/tidewater")).status).toBe(200);
    const refresh = await fetch(`${server.url}/v1/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys.owner}` },
      body: JSON.stringify({ libraryName: "/acme/tidewater" }),
    });
    expect(refresh.status).toBe(403);
    const mcp = new Client({ name: "policy-test", version: "1" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.owner}` } } }));
    try {
      const result = await mcp.callTool({ name: "query-docs", arguments: { libraryId: "/acme/tidewater", query: "retries" } });
      expect(result.isError).toBe(true);
      expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/^access_denied: /);
    } finally {
      await mcp.close();
    }
    // Another team is not affected.
    expect((await api(keys.other).get("/v2/libs/search?libraryName=tidewater")).json.searchFilterApplied).toBe(false);
  });

  it("filter by source type, and lds teams restrict writes the same policy", async () => {
    const owner = api(keys.owner);
    await owner.patch("/v2/policies", { libraries: { allow: null, deny: [] } });
    expect((await owner.get("/v2/libs/search?libraryName=runbooks")).json.results.map((l: { id: string }) => l.id)).toEqual(["/~team-1/wiki/eng"]);
    const gitOnly = await owner.patch("/v2/policies", { sourceTypes: ["git"] });
    expect(gitOnly.json).toMatchObject({ sourceTypes: ["git"], accessibleLibraryCount: 2 });
    expect((await owner.get("/v2/libs/search?libraryName=runbooks")).json.error).toBe("no_libraries_found");
    await cli("teams", "restrict", "acme", "/acme/quarry");
    expect((await owner.get("/v2/policies")).json).toMatchObject({ sourceTypes: ["git"], libraries: { allow: ["/acme/quarry"] }, accessibleLibraryCount: 1 });
    expect(JSON.parse(await cli("teams", "list", "--json")).find((t: { name: string }) => t.name === "acme").policy.libraries.allow).toEqual(["/acme/quarry"]);
    // Back to open: an open policy is stored as none.
    const open = await owner.patch("/v2/policies", { sourceTypes: ["git", "wiki"], libraries: { allow: null } });
    expect(open.json).toMatchObject({ restrictive: false, accessibleLibraryCount: 3 });
  });

  it("answer 429 past the key's rate limit (policies and metrics alike)", async () => {
    let limited: { status: number } | undefined;
    for (let i = 0; i < 20 && !limited; i++) {
      const r = await api(keys.free).get("/v2/policies");
      if (r.status === 429) limited = r;
      else expect(r.status).toBe(200);
    }
    expect(limited?.status).toBe(429);
    // The same key's window covers every endpoint of the public API.
    expect((await api(keys.free).get("/v2/libs/metrics?libraryId=/acme/quarry")).status).toBe(429);
    expect((await api(keys.free).patch("/v2/policies", { sourceTypes: ["git"] })).status).toBe(429);
  });
});

describe("usage metrics: GET /v2/libs/metrics and lds libraries metrics (issue 13)", () => {
  it("count answered requests per day by client kind, with the top topics and MCP clients", async () => {
    const owner = api(keys.owner);
    for (let i = 0; i < 3; i++) expect((await owner.get("/v2/context?libraryId=/acme/quarry&query=dead%20letter%20queue")).status).toBe(200);
    expect((await owner.get("/api/v2/context?libraryId=/acme/quarry&query=retry%20queue", { "x-context7-source": "cli" })).status).toBe(200);
    const mcp = new Client({ name: "metrics-test", version: "1" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.owner}`, "x-context7-client-ide": "cursor" } } }));
    try {
      expect((await mcp.callTool({ name: "query-docs", arguments: { libraryId: "/acme/quarry", query: "queue concurrency" } })).isError).toBeFalsy();
    } finally {
      await mcp.close();
    }
    // Counters are written in batches every few seconds: wait for them.
    const metrics = await eventually(async () => {
      const r = await owner.get("/v2/libs/metrics?libraryId=/acme/quarry&days=7");
      return r.status === 200 && r.json.totalRequests === 5 && r.json;
    });
    expect(metrics.daily).toHaveLength(7);
    // Summed over the days, so that a run across midnight (UTC) counts the same.
    const sum = (kind: "api" | "cli" | "mcp") => metrics.daily.reduce((n: number, d: Record<string, number>) => n + d[kind]!, 0);
    expect({ api: sum("api"), cli: sum("cli"), mcp: sum("mcp") }).toEqual({ api: 3, cli: 1, mcp: 1 });
    expect(metrics.daily[6].date).toBe(metrics.to);
    expect(metrics.topTopics[0]).toEqual({ topic: "queue", count: 5 });
    expect(metrics.mcpClients).toEqual([{ name: "cursor", count: 1 }]);
    const fromCli = JSON.parse(await cli("libraries", "metrics", "/acme/quarry", "--days", "3", "--json"));
    expect(fromCli).toMatchObject({ libraryId: "/acme/quarry", days: 3, totalRequests: 5 });
  });

  it("answer 400 for days outside 1-365, 404 for unknown and other teams' private libraries, 401 without a key", async () => {
    const owner = api(keys.owner);
    expect((await owner.get("/v2/libs/metrics?libraryId=/acme/quarry&days=0")).status).toBe(400);
    expect((await owner.get("/v2/libs/metrics?libraryId=/acme/quarry&days=366")).status).toBe(400);
    expect((await owner.get("/v2/libs/metrics?libraryId=/nobody/nothing")).json.error).toBe("library_not_found");
    // acme's wiki space and its queries do not exist for another team.
    expect((await owner.get("/v2/libs/metrics?libraryId=/~team-1/wiki/eng")).status).toBe(200);
    const hidden = await api(keys.other).get("/v2/libs/metrics?libraryId=/~team-1/wiki/eng");
    expect(hidden.status).toBe(404);
    expect(hidden.json.error).toBe("library_not_found");
    expect((await api(null).get("/v2/libs/metrics?libraryId=/acme/quarry")).status).toBe(401);
  });
});

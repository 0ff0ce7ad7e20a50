import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

const TOKEN = "ghp_anonymous-tests-token";
let git: GitServer;
let server: TestServer | undefined;
let dataDir: string;
let gitEnv: Record<string, string>;

const state = (id: string) => libraryState(dataDir, id)?.state;

beforeAll(async () => {
  git = await startGitServer(TOKEN);
  dataDir = tempDirForFile("lds-anonymous-");
  const init = await runCli("lds", ["init", "--team", "docs", "--email", "owner@anon.test", "--plan", "pro", "--json", "--data-dir", dataDir]);
  expect(init.exitCode, init.stderr).toBe(0);
  const key = JSON.parse(init.stdout).key as string;
  const host = new URL(git.base).host;
  gitEnv = { LDS_GIT_ALLOW_HTTP_HOSTS: host, LDS_GIT_DEFAULT_HOST: host };
  const tidewater = await git.createRepo("public", "acme", "tidewater", fixtureDocs("tidewater"));
  const ledger = await git.createRepo("private", "acme", "ledgerline", fixtureDocs("ledgerline"));
  server = await startServer(dataDir, gitEnv);
  for (const body of [{ docsRepoUrl: tidewater.url }, { docsRepoUrl: ledger.url, private: true, gitToken: TOKEN }]) {
    const r = await fetch(`${server.url}/v2/add/repo/hostb`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    expect(r.status).toBe(200);
  }
  await eventually(async () => state("/acme/tidewater") === "finalized" && state("/~team-1/acme/ledgerline") === "finalized", 60_000);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await git?.close();
});

describe("anonymous reads (LDS_PUBLIC_READ, issue 13)", () => {
  it("are off by default: every read needs a key", async () => {
    const r = await client(server!.url).get("/v2/libs/search?libraryName=tidewater");
    expect(r.status).toBe(401);
    expect(r.json.error).toBe("invalid_api_key");
  });

  it("when on, answer public libraries only, under a per-address limit with the rate-limit headers", async () => {
    await server!.stop();
    server = await startServer(dataDir, { ...gitEnv, LDS_PUBLIC_READ: "true", LDS_RATE_LIMIT_ANONYMOUS: "8" });
    const anon = client(server.url);
    const found = await anon.get("/api/v2/libs/search?libraryName=tidewater");
    expect(found.status, found.text).toBe(200);
    expect(found.json.results.map((l: { id: string }) => l.id)).toEqual(["/acme/tidewater"]);
    expect(found.headers.get("ratelimit-limit")).toBe("8");
    expect(Number(found.headers.get("ratelimit-remaining"))).toBe(7);
    // Another team's private library does not exist for an anonymous reader.
    expect((await anon.get("/v2/libs/search?libraryName=ledgerline")).json.error).toBe("no_libraries_found");
    const hidden = await anon.get("/v2/context?libraryId=/~team-1/acme/ledgerline&query=read%20rows");
    expect(hidden.status).toBe(404);
    expect(hidden.json.error).toBe("library_not_found");
    const docs = await anon.get("/v2/context?libraryId=/acme/tidewater&query=exponential%20backoff");
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("Source: docs/retries.md#exponential-backoff");

    const mcp = new Client({ name: "anonymous", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      const result = await mcp.callTool({ name: "query-docs", arguments: { libraryId: "/acme/tidewater", query: "server-sent events" } });
      expect(result.isError).toBeFalsy();
    } finally {
      await mcp.close();
    }

    // Writes always need a key.
    const submit = await fetch(`${server.url}/v2/add/repo/hostb`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ docsRepoUrl: `${git.base}/acme/other` }) });
    expect(submit.status).toBe(401);

    // The address's budget of 8 a minute: the MCP session used some; keep asking until the limit answers.
    let limited: Awaited<ReturnType<typeof anon.get>> | undefined;
    for (let i = 0; i < 10 && !limited; i++) {
      const r = await anon.get("/v2/libs/search?libraryName=tidewater");
      if (r.status === 429) limited = r;
    }
    expect(limited?.json.error).toBe("rate_limit_exceeded");
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

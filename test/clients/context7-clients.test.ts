import path from "node:path";
import { createRequire } from "node:module";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Context7 } from "@upstash/context7-sdk";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

/**
 * Issue 13: the published clients of the best-known hosted service, installed from npm as they are
 * (@upstash/context7-mcp, ctx7, @upstash/context7-sdk), pointed at a real `lds serve` by their own settings only.
 * Each runs with a HOME of its own, so that no stored login or update check of the developer's machine takes part.
 */
const require = createRequire(import.meta.url);
const MCP_BIN = path.join(path.dirname(require.resolve("@upstash/context7-mcp/package.json")), "dist/index.js");
const CTX7_BIN = path.join(path.dirname(require.resolve("ctx7/package.json")), "dist/index.js");

let git: GitServer;
let server: TestServer;
let dataDir: string;
let key: string;

beforeAll(async () => {
  git = await startGitServer("unused-token");
  dataDir = tempDirForFile("lds-clients-");
  const cli = async (...args: string[]) => {
    const r = await runCli("lds", [...args, "--data-dir", dataDir]);
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };
  key = JSON.parse(await cli("init", "--team", "agents", "--email", "agent@clients.test", "--plan", "pro", "--json")).key;
  const tidewater = await git.createRepo("public", "acme", "tidewater", fixtureDocs("tidewater"));
  await tidewater.tag("v1.0");
  const host = new URL(git.base).host;
  server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: host, LDS_GIT_DEFAULT_HOST: host });
  const submitted = await fetch(`${server.url}/api/v2/add/repo/hostb`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ docsRepoUrl: tidewater.url }),
  });
  expect(submitted.status).toBe(200);
  await eventually(async () => libraryState(dataDir, "/acme/tidewater")?.state === "finalized", 60_000);
  await cli("ingest", "git", tidewater.url, "--tag", "v1.0", "--allow-http-host", host);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await git?.close();
});

describe("the published clients of the hosted service, unchanged, against lds serve", () => {
  it("@upstash/context7-mcp over stdio (CONTEXT7_API_URL) resolves a library and answers its docs as readable text", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_BIN],
      env: { CONTEXT7_API_URL: server.url, CONTEXT7_API_KEY: key, HOME: tempDir("lds-mcp-home-"), PATH: process.env.PATH ?? "" },
      stderr: "pipe",
    });
    const client = new Client({ name: "lds-clients-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const text = (result: any) => (result.content as Array<{ text: string }>).map((c) => c.text).join("\n");
      const resolved = await client.callTool({ name: "resolve-library-id", arguments: { libraryName: "tidewater", query: "retry with backoff" } });
      expect(text(resolved)).toMatch(/^Available Libraries:/);
      expect(text(resolved)).toContain("- Context7-compatible library ID: /acme/tidewater");
      expect(text(resolved)).toContain("- Description: Tidewater is a small HTTP client for Node.js");
      expect(text(resolved)).toContain("- Source Reputation: High");
      expect(text(resolved)).toContain("- Versions: v1.0");
      const docs = await client.callTool({ name: "query-docs", arguments: { libraryId: "/acme/tidewater", query: "exponential backoff with jitter between retry attempts" } });
      // Text as an agent reads it, not a JSON document.
      expect(text(docs)).not.toMatch(/^\s*\{/);
      expect(text(docs)).toContain("### Exponential backoff");
      expect(text(docs)).toContain("Source: docs/retries.md#exponential-backoff");
      const pinned = await client.callTool({ name: "query-docs", arguments: { libraryId: "/acme/tidewater/v1.0", query: "retries" } });
      expect(text(pinned)).toContain("Source: docs/retries.md");
      const unknown = await client.callTool({ name: "query-docs", arguments: { libraryId: "/nobody/nothing", query: "retries" } });
      expect(text(unknown)).toContain("Library /nobody/nothing was not found");
    } finally {
      await client.close();
    }
  });

  it("ctx7 library and ctx7 docs (--base-url), as text and as JSON", async () => {
    const ctx7 = async (...args: string[]) => {
      const r = await execa(process.execPath, [CTX7_BIN, "--base-url", server.url, ...args], {
        reject: false,
        stdin: "ignore",
        env: { CONTEXT7_API_KEY: key, HOME: tempDir("lds-ctx7-home-"), CTX7_TELEMETRY_DISABLED: "1", NO_COLOR: "1" },
      });
      expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
      return String(r.stdout);
    };
    const found = await ctx7("library", "tidewater", "retries");
    expect(found).toContain("Context7-compatible library ID: /acme/tidewater");
    expect(found).toContain("Source Reputation: High");
    const foundJson = JSON.parse(await ctx7("library", "tidewater", "--json"));
    expect(foundJson[0]).toMatchObject({ id: "/acme/tidewater", title: "tidewater", trustScore: 10, stars: -1, versions: ["v1.0"] });
    const docs = await ctx7("docs", "/acme/tidewater", "server-sent events reconnect");
    expect(docs).toContain("### Server-sent events");
    expect(docs).toContain("Source: docs/streaming.md#server-sent-events");
    const docsJson = JSON.parse(await ctx7("docs", "/acme/tidewater", "exponential backoff", "--json"));
    expect(docsJson.codeSnippets[0]).toMatchObject({ codeId: "docs/retries.md#exponential-backoff", codeLanguage: "js" });
    expect(Array.isArray(docsJson.infoSnippets)).toBe(true);
  });

  it("@upstash/context7-sdk searches and fetches context through its HTTP layer", async () => {
    const sdk = new Context7({ apiKey: key });
    // The SDK has no base-URL option: its HTTP client's address is the one setting that names the service.
    (sdk as unknown as { httpClient: { baseUrl: string } }).httpClient.baseUrl = `${server.url}/api`;
    const libraries = await sdk.searchLibrary("retry with backoff", "tidewater");
    expect(libraries[0]).toMatchObject({ id: "/acme/tidewater", name: "tidewater", trustScore: 10, versions: ["v1.0"] });
    expect(libraries[0]!.totalSnippets).toBeGreaterThan(10);
    expect(libraries[0]!.description).toMatch(/^Tidewater is a small HTTP client/);
    const docs = await sdk.getContext("exponential backoff with jitter", "/acme/tidewater");
    expect(docs[0]).toMatchObject({ title: "Exponential backoff", source: "docs/retries.md#exponential-backoff" });
    const text = await sdk.getContext("server-sent events reconnect", "/acme/tidewater", { type: "txt" });
    expect(text).toContain("Source: docs/streaming.md#server-sent-events");
  });
});

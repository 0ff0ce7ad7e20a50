import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startEmbeddingServer, type EmbeddingServer } from "../helpers/embedding-server.js";
import { startGitServer, type GitServer, type TestRepo } from "../helpers/git-server.js";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

/**
 * Issue 13: a real embedding provider behind LDS (a fixture speaking OpenAI's wire format on loopback). A library
 * indexed with the built-in embedder, then the server restarted with the provider: the index is rebuilt in the
 * background while context keeps answering (BM25 alone, and saying so); a slow provider makes the query fall back
 * to BM25; a provider down during a refresh fails the library with a clear reason and its snippets are still served.
 */
let git: GitServer;
let provider: EmbeddingServer;
let server: TestServer | undefined;
let dataDir: string;
let key: string;
let repo: TestRepo;
let gitEnv: Record<string, string>;

const library = () => libraryState(dataDir, "/acme/tidewater");
const vectorMeta = () => {
  const db = new Database(path.join(dataDir, "vectors.db"), { readonly: true });
  try {
    return Object.fromEntries((db.prepare("SELECT key, value FROM vector_meta").all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]));
  } finally {
    db.close();
  }
};
const context = (query: string) => client(server!.url).get(`/v2/context?libraryId=/acme/tidewater&type=json&query=${encodeURIComponent(query)}`, { authorization: `Bearer ${key}` });

beforeAll(async () => {
  git = await startGitServer("unused");
  provider = await startEmbeddingServer();
  dataDir = tempDirForFile("lds-embeddings-");
  const init = await runCli("lds", ["init", "--team", "docs", "--email", "owner@embed.test", "--plan", "pro", "--json", "--data-dir", dataDir]);
  expect(init.exitCode, init.stderr).toBe(0);
  key = JSON.parse(init.stdout).key;
  repo = await git.createRepo("public", "acme", "tidewater", fixtureDocs("tidewater"));
  const host = new URL(git.base).host;
  gitEnv = { LDS_GIT_ALLOW_HTTP_HOSTS: host, LDS_GIT_DEFAULT_HOST: host };
  // First with the built-in embedder.
  server = await startServer(dataDir, gitEnv);
  const r = await fetch(`${server.url}/v2/add/repo/hostb`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ docsRepoUrl: repo.url }) });
  expect(r.status).toBe(200);
  await eventually(async () => library()?.state === "finalized", 60_000);
  await server.stop();
  server = undefined;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await provider?.close();
  await git?.close();
});

describe("an embedding provider behind a running server", () => {
  it("rebuilds the index in the background after a switch, while context answers from BM25 and says so", async () => {
    provider.knobs.delayMs = 400; // one snippet a request, 0.4 s each: the rebuild takes a while
    server = await startServer(dataDir, {
      ...gitEnv,
      LDS_EMBEDDINGS_URL: provider.openaiUrl,
      LDS_EMBEDDINGS_MODEL: "fixture-embed",
      LDS_EMBEDDINGS_DIMENSIONS: "64",
      LDS_EMBEDDINGS_BATCH: "1",
      LDS_EMBEDDINGS_QUERY_TIMEOUT_MS: "1000",
    });
    const during = await context("exponential backoff with jitter between retry attempts");
    expect(during.status, during.text).toBe(200);
    expect(during.json.rankingFallback).toMatch(/vector index is being rebuilt/);
    expect(during.json.codeSnippets[0].codeId).toBe("docs/retries.md#exponential-backoff");
    expect(vectorMeta()).toMatchObject({ embedder: "openai:fixture-embed:64", complete: "0" });

    provider.knobs.delayMs = 0;
    await eventually(async () => vectorMeta().complete === "1", 90_000);
    const after = await context("exponential backoff with jitter between retry attempts");
    expect(after.json.rankingFallback).toBeUndefined();
    expect(after.json.codeSnippets[0].codeId).toBe("docs/retries.md#exponential-backoff");
    // Queries were embedded by the provider too.
    expect(provider.requests.at(-1)!.body).toMatchObject({ model: "fixture-embed", input: ["exponential backoff with jitter between retry attempts"], dimensions: 64 });
  }, 120_000);

  it("ranks by BM25 alone when the provider is too slow for a query, and says so", async () => {
    provider.knobs.delayMs = 3000;
    const started = Date.now();
    const slow = await context("server-sent events reconnect");
    expect(slow.status).toBe(200);
    expect(slow.json.rankingFallback).toMatch(/did not embed the query \(.*did not answer within 1000 ms\); ranked by BM25 alone/);
    expect(slow.json.codeSnippets.length + slow.json.infoSnippets.length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(2900);
    provider.knobs.delayMs = 0;
  });

  it("fails a refresh with a clear reason when the provider is down, and keeps serving the previous snippets", async () => {
    await repo.commit({ "docs/new-page.md": "# Circuit breakers\n\nTidewater opens a circuit after five failures in a row.\n\n```js\ncreateClient({ breaker: { failures: 5 } });\n```\n" });
    provider.knobs.down = true;
    const refresh = await fetch(`${server!.url}/v1/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ libraryName: "/acme/tidewater" }),
    });
    expect(refresh.status).toBe(200);
    const failed = await eventually(async () => {
      const l = library();
      return l?.state === "failed" && l;
    }, 60_000);
    expect(failed.state_reason).toMatch(/^embedding_failed: The embedding provider at http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings cannot be reached \(/);
    const still = await context("exponential backoff with jitter between retry attempts");
    expect(still.status).toBe(200);
    expect(still.json.codeSnippets[0].codeId).toBe("docs/retries.md#exponential-backoff");
    provider.knobs.down = false;
  }, 90_000);

  it("stops promptly on SIGTERM during a slow background rebuild, which the next start runs again", async () => {
    await server!.stop();
    provider.knobs.delayMs = 2000; // 40-odd snippets, one a request: the rebuild would take minutes
    server = await startServer(dataDir, { ...gitEnv, LDS_EMBEDDINGS_URL: provider.openaiUrl, LDS_EMBEDDINGS_MODEL: "fixture-embed-2", LDS_EMBEDDINGS_DIMENSIONS: "32", LDS_EMBEDDINGS_BATCH: "1" });
    await eventually(async () => vectorMeta().embedder === "openai:fixture-embed-2:32");
    const child = server.child;
    const before = provider.requests.length;
    await server.stop();
    expect(child.exitCode).toBe(0);
    // The rebuild was abandoned, not finished first: a request or two at most went out after SIGTERM.
    expect(provider.requests.length - before).toBeLessThan(4);
    expect(server.output()).not.toContain("vector index rebuilt");
    expect(vectorMeta().complete).toBe("0");
    provider.knobs.delayMs = 0;
    server = await startServer(dataDir, { ...gitEnv, LDS_EMBEDDINGS_URL: provider.openaiUrl, LDS_EMBEDDINGS_MODEL: "fixture-embed", LDS_EMBEDDINGS_DIMENSIONS: "64" });
    await eventually(async () => vectorMeta().complete === "1" && vectorMeta().embedder === "openai:fixture-embed:64", 60_000);
  }, 90_000);

  it("keeps CLI commands from rebuilding the index with other embedding settings than the server's", async () => {
    const search = await runCli("lds", ["search", "tidewater", "--data-dir", dataDir]);
    // Without LDS_EMBEDDINGS_* the command would embed otherwise: the index is whole, so a read is fine...
    expect(search.exitCode, search.stderr).toBe(0);
    await server!.stop();
    server = undefined;
    // ...but a stale index (an interrupted rebuild) is not rebuilt with another embedder than the one it was for.
    const db = new Database(path.join(dataDir, "vectors.db"));
    db.prepare("UPDATE vector_meta SET value = '0' WHERE key = 'complete'").run();
    db.close();
    const refused = await runCli("lds", ["context", "/acme/tidewater", "retries", "--data-dir", dataDir]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("The vector index was built by the embedder openai:fixture-embed:64; this command would embed with hashing-v2-384.");
  });
});

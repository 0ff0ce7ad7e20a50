import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";
import { seedVolume } from "../helpers/volume.js";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** A seeded volume (/acme/widgets, /acme/gadgets), a user with a key, and a server with `env`. */
async function world(env: Record<string, string> = {}) {
  const dataDir = tempDir("lds-fail-");
  await seedVolume(dataDir);
  const cli = async (...args: string[]) => {
    const r = await runCli("lds", [...args, "--data-dir", dataDir]);
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };
  await cli("users", "add", "dev@seed.test", "--team", "seed-team", "--role", "owner");
  const key = JSON.parse(await cli("keys", "create", "--email", "dev@seed.test", "--json")).key as string;
  const server = await startServer(dataDir, env);
  servers.push(server);
  const call = async (route: string, init: RequestInit = {}) => {
    const started = Date.now();
    const response = await fetch(server.url + route, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers } });
    return { status: response.status, json: (await response.json()) as any, ms: Date.now() - started };
  };
  return { cli, call, server };
}

describe("the remaining errors of the spec over HTTP", () => {
  it("user_not_found (404): the key of a user removed from its team, until the user is added again", async () => {
    const w = await world();
    expect((await w.call("/v2/libs/search?libraryName=widgets")).status).toBe(200);
    await w.cli("users", "remove", "dev@seed.test");
    for (const request of [w.call("/v2/libs/search?libraryName=widgets"), w.call("/v2/add/repo/hostb", { method: "POST", body: JSON.stringify({ docsRepoUrl: "https://example.test/a/b" }) })]) {
      const r = await request;
      expect(r.status).toBe(404);
      expect(r.json).toEqual({
        error: "user_not_found",
        message: "The user of this API key (dev@seed.test) was removed from its team.",
        hint: "Ask an operator to add you again (in the dashboard's Teams & keys page, or an operator's lds users add), or use a key of another user.",
      });
    }
    await w.cli("users", "add", "dev@seed.test", "--team", "seed-team", "--role", "member");
    expect((await w.call("/v2/libs/search?libraryName=widgets")).json.results[0].id).toBe("/acme/widgets");
  });

  it("timeout (504): a search whose vector scan hangs is stopped at the deadline; the server keeps serving", async () => {
    const w = await world({ LDS_FAILPOINT: "vector-search-stall", LDS_SEARCH_TIMEOUT_MS: "300" });
    const r = await w.call("/v2/context?libraryId=/acme/widgets&query=configure");
    expect(r.status).toBe(504);
    expect(r.json).toEqual({
      error: "timeout",
      message: "The search took longer than 300 ms and was stopped.",
      hint: "Try again; if it keeps happening, the server log and LDS_SEARCH_TIMEOUT_MS are where to look.",
    });
    expect(r.ms).toBeLessThan(5000);
    // Other endpoints did not wait for the hung thread, and a new one is started for the next search.
    expect((await w.call("/v2/libs/search?libraryName=gadgets")).status).toBe(200);
    expect((await w.call("/v2/context?libraryId=/acme/gadgets&query=configure")).status).toBe(504);
  });

  it("internal_error (500): an unexpected failure answers a generic message, logged in full, and the server lives on", async () => {
    const w = await world({ LDS_FAILPOINT: "vector-search-crash" });
    for (let i = 0; i < 2; i++) {
      const r = await w.call("/v2/context?libraryId=/acme/widgets&query=configure");
      expect(r.status).toBe(500);
      expect(r.json).toEqual({ error: "internal_error", message: "Internal error; the server log has details." });
    }
    expect(w.server.output()).toContain("the vector search thread exited with code 70");
    expect((await w.call("/v2/libs/search?libraryName=widgets")).status).toBe(200);
  });
});

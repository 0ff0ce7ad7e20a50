import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startGitServer } from "../helpers/git-server.js";
import { eventually, startServer, type TestServer } from "../helpers/server.js";
import { publicWorld } from "../helpers/public-world.js";
import Database from "better-sqlite3";
import path from "node:path";

const TOKEN = "ghp_private-repo-token-42";
let git: Awaited<ReturnType<typeof startGitServer>>;
beforeAll(async () => {
  git = await startGitServer(TOKEN);
});
afterAll(async () => {
  await git?.close();
});
const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

const DOCS = { "README.md": "# Gadgets\n\nGadgets hold widgets and arrange them in rows, columns or grids of any size you choose.\n\n## Start\n\nCreate one first.\n\n```js\nconst g = new Gadget()\n```\n" };

const world = (env: Record<string, string> = {}) => publicWorld(git, servers, env);

describe("the public API", () => {
  it("answers 401 invalid_api_key for a missing, malformed, unknown or revoked key", async () => {
    const w = await world();
    const body = { docsRepoUrl: "https://example.test/a/b" };
    expect((await w.call("/v2/add/repo/hostb", body)).json.error).toBe("invalid_api_key");
    expect((await w.call("/v2/add/repo/hostb", body, "sk-not-ours")).json.error).toBe("invalid_api_key");
    const unknown = w.keys.proOwner.replace(/\.(.)/, (_, c) => `.${c === "A" ? "B" : "A"}`);
    const r = await w.call("/v2/add/repo/hostb", body, unknown);
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ error: "invalid_api_key" });
    const prefix = w.keys.proMember.split(".")[0]!;
    await w.cli("keys", "revoke", prefix);
    expect((await w.call("/v1/refresh", { libraryName: "/a/b" }, w.keys.proMember)).json.error).toBe("invalid_api_key");
  });

  it("ingests a public repository end to end and answers with the spec's fields", async () => {
    const w = await world();
    const repo = await git.createRepo("public", "acme", "gadgets", DOCS);
    const r = await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url }, w.keys.freeOwner);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ libraryName: "/acme/gadgets", message: "Repository /acme/gadgets was submitted for processing." });
    expect(Number(r.headers.get("ratelimit-limit"))).toBe(60);
    expect(Number(r.headers.get("ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    const done = await eventually(async () => (w.library("/acme/gadgets")?.state === "finalized" ? w.library("/acme/gadgets") : undefined));
    expect(done.snippets).toBe(2);
  });

  it("private repositories: owners and admins of paid plans only, with the token, and never twice", async () => {
    const w = await world();
    const repo = await git.createRepo("private", "acme", "internal", DOCS);
    const body = { docsRepoUrl: repo.url, private: true, gitToken: TOKEN };
    const member = await w.call("/v2/add/repo/hostb", body, w.keys.proMember);
    expect(member.status).toBe(403);
    expect(member.json).toMatchObject({ error: "forbidden", message: "Only team owners and admins can add private repositories." });
    const free = await w.call("/v2/add/repo/hostb", body, w.keys.freeOwner);
    expect(free.status).toBe(403);
    expect(free.json.message).toMatch(/plan does not allow private repositories/);

    // A private library's id is scoped to its team (pro-team is team 2), so that teams never collide.
    const added = await w.call("/v2/add/repo/hostb", body, w.keys.proOwner);
    expect(added.json).toEqual({ libraryName: "/~team-2/acme/internal", message: "Repository /~team-2/acme/internal was submitted for processing." });
    await eventually(async () => w.library("/~team-2/acme/internal")?.state === "finalized");
    const again = await w.call("/v2/add/repo/hostb", body, w.keys.proOwner);
    expect(again.status).toBe(409);
    expect(again.json.error).toBe("duplicate_repo");
    expect(again.json.message).toContain("already in your team as /~team-2/acme/internal");
    // The token was only needed while the job waited: nothing sealed is left.
    const db = new Database(path.join(w.dataDir, "lds.db"), { readonly: true });
    expect(db.prepare("SELECT count(*) FROM secrets WHERE name LIKE 'job:%'").pluck().get()).toBe(0);
    db.close();
    expect(w.server.output()).not.toContain(TOKEN);
  });

  it("without a gitToken, a private repository is cloned with the team's connected git account", async () => {
    const w = await world();
    const r = await runCli("lds", ["connections", "add-git", "--team", "pro-team", "--host", new URL(git.base).host, "--data-dir", w.dataDir], { LDS_CONNECTION_TOKEN: TOKEN });
    expect(r.exitCode, r.stderr).toBe(0);
    const repo = await git.createRepo("private", "acme", "connected", DOCS);
    expect((await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url, private: true }, w.keys.proOwner)).status).toBe(200);
    const done = await eventually(async () => (["finalized", "failed"].includes(w.library("/~team-2/acme/connected")?.state ?? "") ? w.library("/~team-2/acme/connected") : undefined));
    expect(done).toMatchObject({ state: "finalized", snippets: 2 });
  });

  it("generateDocs (private only) adds snippets from documented exports, and refreshes keep them", async () => {
    const w = await world();
    const files = { ...DOCS, "src/gadget.ts": "/** Make a gadget with the given number of rows. */\nexport function makeGadget(rows: number): Gadget {\n  return new Gadget(rows);\n}\n" };
    const repo = await git.createRepo("private", "acme", "gen", files);
    const publicAttempt = await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url, generateDocs: true }, w.keys.proOwner);
    expect(publicAttempt.status).toBe(400);
    expect(publicAttempt.json.message).toMatch(/generateDocs applies to private repository submissions only/);
    expect((await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url, private: true, generateDocs: true, gitToken: TOKEN }, w.keys.proOwner)).status).toBe(200);
    const generated = () => {
      const db = new Database(path.join(w.dataDir, "lds.db"), { readonly: true });
      try {
        return db.prepare("SELECT content FROM snippets WHERE library_id = '/~team-2/acme/gen' AND title = 'makeGadget'").pluck().all();
      } finally {
        db.close();
      }
    };
    await eventually(async () => w.library("/~team-2/acme/gen")?.state === "finalized");
    expect(generated()).toEqual(["export function makeGadget(rows: number): Gadget"]);
    await repo.commit({ "README.md": DOCS["README.md"] + "\nMore words about gadgets and the rows they hold, for the refresh to see a change.\n" });
    expect((await w.call("/v1/refresh", { libraryName: "/~team-2/acme/gen", gitToken: TOKEN }, w.keys.proOwner)).status).toBe(200);
    await eventually(async () => {
      const db = new Database(path.join(w.dataDir, "lds.db"), { readonly: true });
      try {
        return (db.prepare("SELECT state FROM jobs WHERE library_id = '/~team-2/acme/gen' AND kind = 'refresh'").pluck().get() as string | undefined) === "done";
      } finally {
        db.close();
      }
    });
    expect(generated()).toEqual(["export function makeGadget(rows: number): Gadget"]);
  });

  it("a job interrupted by a crash runs again when the server starts", async () => {
    const w = await world();
    const repo = await git.createRepo("public", "acme", "crashy", DOCS);
    await w.server.stop();
    servers.splice(servers.indexOf(w.server), 1);
    // What a kill -9 in the middle of a job leaves behind: the library mid-way and the job 'running'.
    const db = new Database(path.join(w.dataDir, "lds.db"));
    db.prepare("INSERT INTO libraries (id, title, source, source_url, state) VALUES ('/acme/crashy', 'crashy', 'git', ?, 'fetching')").run(repo.url);
    db.prepare("INSERT INTO jobs (library_id, kind, state, payload) VALUES ('/acme/crashy', 'ingest', 'running', ?)").run(JSON.stringify({ url: repo.url }));
    db.close();
    const restarted = await startServer(w.dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host, LDS_GIT_DEFAULT_HOST: new URL(git.base).host });
    servers.push(restarted);
    expect(restarted.output()).toContain("re-queued jobs interrupted by the last shutdown");
    const done = await eventually(async () => (w.library("/acme/crashy")?.state === "finalized" ? w.library("/acme/crashy") : undefined));
    expect(done.snippets).toBe(2);
  });

  it("library owners get their own refresh limit; others a stricter one", async () => {
    const w = await world({ LDS_REFRESH_LIMIT_OWNER: "3", LDS_REFRESH_LIMIT: "1" });
    const repo = await git.createRepo("public", "acme", "limited", DOCS);
    await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url }, w.keys.proOwner);
    await eventually(async () => w.library("/acme/limited")?.state === "finalized");
    for (let i = 0; i < 3; i++) expect((await w.call("/v1/refresh", { libraryName: "/acme/limited" }, w.keys.proOwner)).status).toBe(200);
    expect((await w.call("/v1/refresh", { libraryName: "/acme/limited" }, w.keys.proOwner)).status).toBe(429);
    expect((await w.call("/v1/refresh", { libraryName: "/acme/limited" }, w.keys.freeOwner)).status).toBe(200);
    const other = await w.call("/v1/refresh", { libraryName: "/acme/limited" }, w.keys.freeOwner);
    expect(other.status).toBe(429);
    expect(other.json.error).toBe("rate_limit_exceeded");
  });

  it("a repository over the size limit fails with repository_too_large", async () => {
    const w = await world({ LDS_GIT_MAX_BYTES: "2000" });
    const repo = await git.createRepo("public", "acme", "huge", { ...DOCS, "docs/big.md": "# Big\n\n" + "lorem ipsum ".repeat(500) });
    await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url }, w.keys.proOwner);
    const failed = await eventually(async () => (w.library("/acme/huge")?.state === "failed" ? w.library("/acme/huge") : undefined));
    expect(failed.state_reason).toMatch(/^repository_too_large: /);
  });

  it("a wrong token fails the job with the reason on the library", async () => {
    const w = await world();
    const repo = await git.createRepo("private", "acme", "locked", DOCS);
    await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url, private: true, gitToken: "wrong" }, w.keys.proOwner);
    const failed = await eventually(async () => (w.library("/~team-2/acme/locked")?.state === "failed" ? w.library("/~team-2/acme/locked") : undefined));
    expect(failed.state_reason).toMatch(/^repository_auth_failed/);
  });

  it("validates bodies and library ids (400), and refreshes only known libraries and branches", async () => {
    const w = await world();
    const missing = await w.call("/v2/add/repo/hostb", {}, w.keys.proOwner);
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ error: "validation_error" });
    expect(missing.json.message).toMatch(/docsRepoUrl/);
    expect((await w.call("/v2/add/repo/hostb", { docsRepoUrl: "ftp://x/a/b" }, w.keys.proOwner)).json.message).toMatch(/^docsRepoUrl: Repository URL refused/);
    expect((await w.call("/v1/refresh", { libraryName: "not-an-id" }, w.keys.proOwner)).json.error).toBe("invalid_library_id");
    expect((await w.call("/v1/refresh", { libraryName: "/nobody/nothing" }, w.keys.proOwner)).json.error).toBe("library_not_found");

    const repo = await git.createRepo("public", "acme", "tools", DOCS);
    await w.call("/v2/add/repo/hostb", { docsRepoUrl: repo.url }, w.keys.proOwner);
    await eventually(async () => w.library("/acme/tools")?.state === "finalized");
    const badBranch = await w.call("/v1/refresh", { libraryName: "/acme/tools", branch: "develop" }, w.keys.proOwner);
    expect(badBranch.status).toBe(404);
    expect(badBranch.json).toMatchObject({ error: "branch_not_found" });
    expect(badBranch.json.message).toContain("its branches: main.");

    await repo.commit({ "README.md": "# Gadgets\n\n```js\nconst g = new Gadget({ rows: 2 })\n```\n" });
    const refreshed = await w.call("/v1/refresh", { libraryName: "/acme/tools", branch: "main" }, w.keys.proOwner);
    expect(refreshed.json).toEqual({ message: "Refresh of /acme/tools (main) started." });
    await eventually(async () => {
      const db = new Database(path.join(w.dataDir, "lds.db"), { readonly: true });
      try {
        return db.prepare("SELECT content FROM snippets WHERE library_id = '/acme/tools'").pluck().all().join() === "const g = new Gadget({ rows: 2 })";
      } finally {
        db.close();
      }
    });

    await w.cli("teams", "restrict", "pro-team", "/acme/other");
    expect((await w.call("/v1/refresh", { libraryName: "/acme/tools" }, w.keys.proOwner)).json.error).toBe("access_denied");
  });

  it("limits requests per key with RateLimit headers and 429 Retry-After, and floods of bad keys per address", async () => {
    const w = await world({ LDS_RATE_LIMIT_FREE: "3", LDS_RATE_LIMIT_UNAUTHENTICATED: "2" });
    for (let i = 0; i < 3; i++) {
      const r = await w.call("/v1/refresh", { libraryName: "/x/y" }, w.keys.freeOwner);
      expect(r.json.error).toBe("library_not_found");
      expect(r.headers.get("ratelimit-remaining")).toBe(String(2 - i));
    }
    const limited = await w.call("/v1/refresh", { libraryName: "/x/y" }, w.keys.freeOwner);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe("rate_limit_exceeded");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("ratelimit-limit")).toBe("3");
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    const reset = Number(limited.headers.get("ratelimit-reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    // Another key of the same server is not affected.
    expect((await w.call("/v1/refresh", { libraryName: "/x/y" }, w.keys.proOwner)).status).toBe(404);

    expect((await w.call("/v1/refresh", { libraryName: "/x/y" }, "bad")).status).toBe(401);
    expect((await w.call("/v1/refresh", { libraryName: "/x/y" }, "bad")).status).toBe(401);
    expect((await w.call("/v1/refresh", { libraryName: "/x/y" }, "bad")).status).toBe(429);
  });
});

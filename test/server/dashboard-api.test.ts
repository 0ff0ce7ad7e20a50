import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { libraryIds, seedVolume } from "../helpers/volume.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { LATEST_SCHEMA_VERSION } from "../../src/engine/sqlite/migrations.js";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function signedIn(dataDir: string, env: Record<string, string> = {}) {
  const server = await startServer(dataDir, env);
  servers.push(server);
  const api = client(server.url);
  expect((await api.login()).status).toBe(200);
  return { server, api };
}

const del = (api: ReturnType<typeof client>, route: string) => api.request("DELETE", route);

describe("the dashboard's admin API", () => {
  it("answers the session, and an overview whose warnings say what to do", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir, { libraries: [{ id: "/acme/widgets" }, { id: "/acme/broken", state: "failed", snippets: 0 }] });
    const soon = new Date(Date.now() + 5 * 86_400_000).toISOString();
    fs.writeFileSync(path.join(dataDir, "license.json"), JSON.stringify({ licensee: "Acme", expiresAt: soon }));
    const { server, api } = await signedIn(dataDir);
    expect((await api.get("/api/auth/session")).json).toEqual({ username: "admin" });
    expect((await client(server.url).get("/api/auth/session")).status).toBe(401);

    const overview = (await api.get("/api/overview")).json;
    expect(overview).toMatchObject({ schemaVersion: LATEST_SCHEMA_VERSION, libraries: { total: 2, byState: { finalized: 1, failed: 1 } }, licence: { state: "valid", licensee: "Acme" } });
    expect(overview.licence.daysLeft).toBeGreaterThanOrEqual(4);
    expect(overview.volume.bytes).toBeGreaterThan(0);
    expect(overview.volume.freeBytes).toBeGreaterThan(0);
    const codes = overview.warnings.map((w: { code: string }) => w.code);
    expect(codes).toEqual(expect.arrayContaining(["licence_expiring", "no_backup_yet", "library_failing"]));
    const failing = overview.warnings.find((w: { code: string }) => w.code === "library_failing");
    expect(failing.message).toContain("/acme/broken");
    expect(failing.hint).toBe('Fix the cause, then refresh it: POST /v1/refresh {"libraryName": "/acme/broken"}.');
  });

  it("tests a destination without saving it, naming the step that failed; records runs in the history with their errors", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const { api } = await signedIn(dataDir);
    const target = tempDir();
    const ok = await api.post("/api/backup/test-connection", { destination: { type: "local", path: target } });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ ok: true, destination: target });
    expect(fs.readdirSync(target)).toEqual([]);
    // A directory that cannot be written (a file in the way): the step and the path are named.
    const blocked = path.join(target, "file");
    fs.writeFileSync(blocked, "x");
    const bad = await api.post("/api/backup/test-connection", { destination: { type: "local", path: path.join(blocked, "sub") } });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.json.message).toContain(blocked);
    expect(bad.json.hint).toBeTruthy();
    expect((await api.post("/api/backup/test-connection", { destination: { type: "local", path: "relative/dir" } })).json.message).toBe("destination.path must be an absolute path.");
    expect((await api.post("/api/backup/test-connection", {})).json.message).toBe("destination is required.");
    expect((await api.get("/api/backup/config")).json.destination).toEqual({ type: "local", path: null });

    await api.put("/api/backup/config", { destination: { type: "local", path: target }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" });
    // An archive written by cron's lds backup to the same destination: the overview counts it, no "no backup yet".
    const cron = await runCli("lds", ["backup", "--data-dir", dataDir, "--to", target]);
    expect(cron.exitCode, cron.stderr).toBe(0);
    const afterCron = (await api.get("/api/overview")).json;
    expect(afterCron.backup.newestArchive.name).toMatch(/^lds-backup-/);
    expect(afterCron.warnings.map((w: { code: string }) => w.code)).not.toContain("no_backup_yet");
    fs.rmSync(target, { recursive: true });
    fs.mkdirSync(target);
    await api.post("/api/backup");
    await eventually(async () => (await api.get("/api/backup/runs")).json.runs.length === 1);
    // The next run fails: its destination became a file.
    fs.rmSync(target, { recursive: true });
    fs.writeFileSync(target, "not a directory");
    await api.post("/api/backup");
    const runs = await eventually(async () => {
      const list = (await api.get("/api/backup/runs")).json.runs;
      return list.length === 2 && list;
    });
    expect(runs[0]).toMatchObject({ trigger: "api", ok: false, error: { code: expect.any(String), message: expect.stringContaining(target) } });
    expect(runs[0].error.hint).toBeTruthy();
    expect(runs[1]).toMatchObject({ trigger: "api", ok: true, archive: expect.stringMatching(/^lds-backup-/) });
    const overview = (await api.get("/api/overview")).json;
    expect(overview.warnings.map((w: { code: string }) => w.code)).toContain("backup_failing");
  });

  it("records the outcome of a staged restore that failed, with where the archive was kept", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const staged = path.join(dataDir, "restore-staged");
    fs.mkdirSync(staged);
    fs.writeFileSync(path.join(staged, "archive.tar"), "not an archive at all");
    fs.writeFileSync(path.join(staged, "request.json"), JSON.stringify({ source: "upload", requestedBy: "admin", stagedAt: "2026-11-22T10:00:00.000Z" }));
    const { api } = await signedIn(dataDir);
    const { outcome } = (await api.get("/api/restore/outcome")).json;
    expect(outcome).toMatchObject({ result: "failed", source: "upload", requestedBy: "admin", stagedAt: "2026-11-22T10:00:00.000Z" });
    expect(fs.existsSync(path.join(outcome.keptIn, "archive.tar"))).toBe(true);
    expect(outcome.error).toBeTruthy();
    expect(libraryIds(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
    expect((await api.get("/api/restore/limits")).json).toEqual({ uploadLimitBytes: expect.any(Number), volumeName: path.basename(dataDir) });
  });

  it("refuses to remove a library while one of its jobs waits or runs (library_busy), and removes it all otherwise", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir, { runningJobFor: "/acme/gadgets" });
    const volume = await openVolume(dataDir);
    try {
      await expect(volume.store.libraries.remove("/acme/gadgets")).rejects.toMatchObject({ code: "library_busy" });
      expect(await volume.store.libraries.find("/acme/gadgets")).toBeDefined();
      const ids = await volume.store.libraries.remove("/acme/widgets");
      expect(ids).toHaveLength(3);
      expect(await volume.store.snippets.count("/acme/widgets")).toBe(0);
    } finally {
      volume.close();
    }
  });

  it("connections: providers are validated, a secret is write-only, and Connect needs a configured provider", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const { server, api } = await signedIn(dataDir);
    const listed = (await api.get("/api/oauth/providers")).json;
    expect(listed.redirectUri).toBe(`${server.url}/api/oauth/callback`);
    expect(listed.providers.map((p: { kind: string }) => p.kind)).toEqual(["github", "gitlab", "atlassian"]);
    expect(listed.providers[0]).toMatchObject({ clientId: "", clientSecretSet: false, apiBase: "https://api.github.com", gitHosts: ["github.com"] });
    const start = await api.post("/api/oauth/github/start", { team: "seed-team" });
    expect(start.status).toBe(409);
    expect(start.json.error).toBe("oauth_not_configured");
    expect((await api.put("/api/oauth/providers/github", { clientId: "id", tokenUrl: "file:///etc/passwd" })).status).toBe(400);
    expect((await api.put("/api/oauth/providers/nope", { clientId: "id" })).status).toBe(404);
    const saved = await api.put("/api/oauth/providers/gitlab", { clientId: "app-1", clientSecret: "s3cr3t-value", apiBase: "https://git.example.test/api/v4/", gitHosts: ["Git.Example.Test"] });
    expect(saved.json).toMatchObject({ clientId: "app-1", clientSecretSet: true, apiBase: "https://git.example.test/api/v4", gitHosts: ["git.example.test"] });
    expect(JSON.stringify((await api.get("/api/oauth/providers")).json)).not.toContain("s3cr3t-value");
    const begun = await api.post("/api/oauth/gitlab/start", { team: "seed-team" });
    const authorize = new URL(begun.json.authorizeUrl);
    expect(authorize.origin + authorize.pathname).toBe("https://gitlab.com/oauth/authorize");
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ client_id: "app-1", response_type: "code", redirect_uri: `${server.url}/api/oauth/callback`, code_challenge_method: "S256" });
    expect(authorize.searchParams.get("state")!.length).toBeGreaterThanOrEqual(32);
    expect(authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The callback with an unknown state goes back to the dashboard with the reason, connecting nothing.
    const back = await fetch(`${server.url}/api/oauth/callback?state=forged&code=x`, { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(new URL(back.headers.get("location")!, server.url).searchParams.get("error")).toBe("oauth_state_invalid");
    expect((await api.get("/api/connections")).json.connections).toEqual([]);
    expect((await api.put("/api/oauth/providers/gitlab", { clientSecret: "" })).json.clientSecretSet).toBe(false);
    expect(server.output()).not.toContain("s3cr3t-value");
  });

  it("manages teams, users and keys (the secret once, audit-logged), and removes libraries with their snippets", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const { server, api } = await signedIn(dataDir);
    expect((await api.post("/api/teams", { name: "docs", plan: "pro" })).status).toBe(201);
    expect((await api.post("/api/teams", { name: "docs", plan: "pro" })).json.message).toBe("A team named docs already exists.");
    expect((await api.post("/api/teams", { name: "bad name!", plan: "pro" })).status).toBe(400);
    expect((await api.request("PATCH", "/api/teams/docs", { plan: "enterprise" })).json.plan).toBe("enterprise");
    const added = await api.post("/api/users", { team: "docs", email: "o@docs.test", role: "owner" });
    expect(added.status).toBe(201);
    // The API's names, not the record's (teamId): a user's team is team_id, field for field and in order, as before.
    expect(JSON.stringify(added.json)).toBe(JSON.stringify({ id: added.json.id, team_id: 2, email: "o@docs.test", role: "owner", team: "docs" }));
    expect((await api.get("/api/users")).json).toEqual({ users: [added.json] });
    expect((await api.post("/api/users", { team: "nope", email: "x@docs.test", role: "owner" })).json.error).toBe("team_not_found");
    const created = await api.post("/api/keys", { email: "o@docs.test", name: "ci" });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const { key, prefix } = created.json;
    const listed = (await api.get("/api/keys")).json.keys;
    expect(JSON.stringify(listed)).not.toContain(key.slice(prefix.length));
    expect((await fetch(`${server.url}/v2/libs/search?libraryName=widgets`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await del(api, `/api/keys/${prefix}`)).json).toEqual({ revoked: prefix });
    expect((await fetch(`${server.url}/v2/libs/search?libraryName=widgets`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    expect((await del(api, "/api/users/o@docs.test")).json).toEqual({ removed: "o@docs.test" });
    expect(server.output()).not.toContain(key);

    const removed = await del(api, `/api/libraries?id=${encodeURIComponent("/acme/widgets")}`);
    expect(removed.json).toEqual({ removed: "/acme/widgets", snippets: 3 });
    expect((await del(api, `/api/libraries?id=${encodeURIComponent("/acme/widgets")}`)).status).toBe(404);
    expect(libraryIds(dataDir)).toEqual(["/acme/gadgets"]);
    const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
    const audit = db.prepare("SELECT actor, action FROM audit_log ORDER BY rowid").all();
    const snippets = db.prepare("SELECT count(*) FROM snippets WHERE library_id = '/acme/widgets'").pluck().get();
    db.close();
    expect(snippets).toBe(0);
    expect(audit).toEqual(
      expect.arrayContaining([
        { actor: "admin:admin", action: "team.create" },
        { actor: "admin:admin", action: "key.create" },
        { actor: "admin:admin", action: "key.revoke" },
        { actor: "admin:admin", action: "library.remove" },
      ]),
    );
    // Without a session: 401 before any validation.
    expect((await client(server.url).post("/api/teams", { name: "x" })).status).toBe(401);
  });
});

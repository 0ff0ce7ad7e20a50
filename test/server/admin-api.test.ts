import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir, tempDirForFile } from "../helpers/temp.js";
import { ADMIN, client, startServer, type TestServer } from "../helpers/server.js";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});
async function server(env: Record<string, string> = {}, dataDir = tempDir()) {
  const s = await startServer(dataDir, env);
  servers.push(s);
  return { ...s, dataDir, api: client(s.url) };
}

const localConfig = (dir: string, extra: Record<string, unknown> = {}) => ({
  destination: { type: "local", path: dir },
  schedule: { preset: "off" },
  retention: { keep: null },
  compression: "none",
  ...extra,
});

describe("admin sessions", () => {
  it("every admin endpoint answers 401 without a session", async () => {
    const { api } = await server();
    for (const [method, route] of [
      ["POST", "/api/backup"],
      ["GET", "/api/backup/status"],
      ["GET", "/api/backups"],
      ["GET", "/api/backups/lds-backup-20260101T000000Z.tar/download"],
      ["GET", "/api/backup/config"],
      ["PUT", "/api/backup/config"],
      ["POST", "/api/restore/validate"],
      ["POST", "/api/restore/stage"],
    ] as const) {
      const response = await api.request(method, route, method === "GET" ? undefined : {});
      expect(response.status, `${method} ${route}`).toBe(401);
      expect(response.json).toMatchObject({ error: "not_authenticated" });
    }
  });

  it("a wrong password gets 401, a right one an HttpOnly SameSite=Strict cookie; logout ends the session", async () => {
    const { api, url } = await server();
    const wrong = await api.login(ADMIN.username, "not the password");
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ error: "login_failed", message: "Wrong username or password." });
    const unknown = await api.login("nobody", ADMIN.password);
    expect(unknown.json.error).toBe("login_failed");

    const ok = await api.login();
    expect(ok.status).toBe(200);
    const setCookie = ok.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^lds_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toMatch(/Secure/);
    expect((await api.get("/api/backup/status")).status).toBe(200);

    const saved = api.cookie;
    await api.post("/api/auth/logout");
    const replay = client(url);
    replay.cookie = saved;
    expect((await replay.get("/api/backup/status")).json.error).toBe("not_authenticated");
  });

  it("an expired session is refused", async () => {
    const { api } = await server({ LDS_SESSION_TTL_SECONDS: "1" });
    await api.login();
    expect((await api.get("/api/backup/status")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1500));
    const expired = await api.get("/api/backup/status");
    expect(expired.status).toBe(401);
    expect(expired.json.message).toMatch(/expired/);
  });

  it("the first admin's password can come from LDS_ADMIN_PASSWORD_FILE (item 14)", async () => {
    const file = path.join(tempDir(), "admin-password");
    fs.writeFileSync(file, "a password kept in a file\n", { mode: 0o600 });
    const { api } = await server({ LDS_ADMIN_PASSWORD: "", LDS_ADMIN_PASSWORD_FILE: file });
    expect((await api.login(ADMIN.username, "a password kept in a file")).status).toBe(200);
  });

  it("login attempts are rate limited", async () => {
    const { api } = await server({ LDS_LOGIN_ATTEMPTS_PER_MINUTE: "3" });
    for (let i = 0; i < 3; i++) expect((await api.login(ADMIN.username, "wrong")).status).toBe(401);
    const limited = await api.login();
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe("rate_limit_exceeded");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("behind a trusted proxy, a rotating X-Forwarded-For does not buy more guesses for one account (item 9)", async () => {
    const { api } = await server({ LDS_LOGIN_ATTEMPTS_PER_MINUTE: "3", LDS_TRUST_PROXY: "true" });
    const from = (i: number) => ({ "x-forwarded-for": `198.51.100.${i}`, "content-type": "application/json" });
    for (let i = 0; i < 3; i++) expect((await api.request("POST", "/api/auth/login", { username: ADMIN.username, password: "wrong" }, from(i))).status).toBe(401);
    const limited = await api.request("POST", "/api/auth/login", { username: ADMIN.username, password: ADMIN.password }, from(99));
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe("rate_limit_exceeded");
  });
});

describe("hostile bodies (item 11)", () => {
  it("JSON nested 100,000 deep is a 400, and the server keeps answering", async () => {
    const { api, url } = await server();
    await api.login();
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const response = await fetch(`${url}/api/backup/config`, { method: "PUT", headers: { cookie: api.cookie!, "content-type": "application/json" }, body: deep });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "validation_error", message: "The request body is nested more than 64 levels deep; no endpoint takes that." });
    expect((await api.get("/api/health")).status).toBe(200);
  });

  it("a destination path on /proc is a 400 at once, and the server keeps answering (item 5)", async () => {
    const { api } = await server();
    await api.login();
    const r = await api.put("/api/backup/config", localConfig("/proc/lds-backups"));
    expect(r.status).toBe(400);
    expect(r.json.message).toBe("The backup destination /proc/lds-backups cannot hold archives: it is under /proc, a virtual filesystem of the kernel.");
    expect((await api.get("/api/health")).status).toBe(200);
  });
});

describe("cross-site requests (item 8)", () => {
  it("refuses a state-changing admin request from another origin, or with a form's content type", async () => {
    const { api, dataDir, url } = await server();
    await api.login();
    const plain = await api.request("POST", "/api/backup", "{}", { "content-type": "text/plain" });
    expect(plain.status).toBe(415);
    expect(plain.json).toMatchObject({ error: "unsupported_media_type" });
    const untyped = await fetch(`${url}/api/backup`, { method: "POST", headers: { cookie: api.cookie! }, body: new Uint8Array(Buffer.from("{}")) });
    expect(untyped.status).toBe(415);
    const foreign = await api.request("POST", "/api/backup", {}, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.json.message).toMatch(/^Cross-site request refused \(Origin: https:\/\/evil.example\)/);
    const site = await api.request("POST", "/api/auth/logout", undefined, { "sec-fetch-site": "cross-site" });
    expect(site.status).toBe(403);
    expect(fs.existsSync(path.join(dataDir, "backups")) ? fs.readdirSync(path.join(dataDir, "backups")) : []).toEqual([]);
    // The session survived the cross-site logout; the same origin (or a CLI client, which sends no Origin) works.
    const own = await api.request("POST", "/api/backup", {}, { origin: new URL(url).origin, "sec-fetch-site": "same-origin" });
    expect(own.status).toBe(202);
  });
});

describe("backup configuration", () => {
  // A directory no other program holds: a file left at a fixed path such as /tmp/x failed these cases (11-25).
  const absentDir = path.join(tempDirForFile("lds-admin-api-"), "archives");
  it.each([
    [{ ...localConfig(absentDir), destination: { type: "s3" } }, /destination.bucket is required/],
    [{ ...localConfig(absentDir), destination: { type: "ftp" } }, /destination.type must be "local" or "s3"/],
    [{ ...localConfig(absentDir), destination: { type: "local", path: "relative/dir" } }, /destination.path must be an absolute path/],
    [{ ...localConfig(absentDir), schedule: { preset: "hourly" } }, /schedule.preset must be one of/],
    [{ ...localConfig(absentDir), schedule: { preset: "custom" } }, /schedule.cron is required/],
    [{ ...localConfig(absentDir), schedule: { preset: "custom", cron: "61 * * * *" } }, /schedule.cron "61 \* \* \* \*" is not a valid cron expression/],
    [{ ...localConfig(absentDir), schedule: { preset: "daily", timezone: "Mars/Olympus" } }, /schedule.timezone "Mars\/Olympus" is not a known IANA timezone/],
    [{ ...localConfig(absentDir), retention: { keep: 0 } }, /retention.keep must be >= 1/],
    [{ ...localConfig(absentDir), compression: "zstd" }, /compression must be one of "none", "gzip"/],
    [{ ...localConfig(absentDir), colour: "blue" }, /colour is not a known field/],
    [{ destination: { type: "local" } }, /schedule is required/],
  ])("rejects a bad body with 400 naming the field (%#)", async (body, message) => {
    const { api } = await server();
    await api.login();
    const response = await api.put("/api/backup/config", body);
    expect(response.status).toBe(400);
    expect(response.json.error).toBe("validation_error");
    expect(response.json.message).toMatch(message);
  });

  it("answers malformed JSON with 400 validation_error", async () => {
    const s = await server();
    await s.api.login();
    const response = await fetch(`${s.url}/api/backup/config`, { method: "PUT", headers: { cookie: s.api.cookie!, "content-type": "application/json" }, body: "{not json" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "validation_error", message: "The request body is not valid JSON." });
  });

  it("stores the S3 secret sealed and never returns it", async () => {
    const s = await server();
    const { api, dataDir } = s;
    await api.login();
    const config = {
      destination: { type: "s3", bucket: "my-backups", prefix: "lds", endpoint: "http://127.0.0.1:9", forcePathStyle: true, accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/very-secret" },
      schedule: { preset: "weekly", timezone: "Europe/Berlin" },
      retention: { keep: 7 },
      compression: "gzip",
    };
    const put = await api.put("/api/backup/config", config);
    expect(put.status).toBe(200);
    const got = await api.get("/api/backup/config");
    expect(got.json.destination).toMatchObject({ type: "s3", bucket: "my-backups", region: "us-east-1", secretAccessKeySet: true });
    expect(got.text).not.toContain("very-secret");
    expect(put.text).not.toContain("very-secret");
    const status = await api.get("/api/backup/status");
    expect(status.json.nextRun).toMatch(/T\d\d:00:00.000Z$/);
    for (const file of ["lds.db", "lds.db-wal"]) {
      const bytes = fs.existsSync(path.join(dataDir, file)) ? fs.readFileSync(path.join(dataDir, file)) : Buffer.alloc(0);
      expect(bytes.includes(Buffer.from("very-secret"))).toBe(false);
    }
    // Saving again without the secret keeps it; an empty string removes it.
    const { secretAccessKey: _s, ...withoutSecret } = config.destination;
    expect((await api.put("/api/backup/config", { ...config, destination: withoutSecret })).json.destination.secretAccessKeySet).toBe(true);
    expect((await api.put("/api/backup/config", { ...config, destination: { ...withoutSecret, secretAccessKey: "" } })).json.destination.secretAccessKeySet).toBe(false);
    expect(s.output()).toContain("backup configuration changed");
    expect(s.output()).not.toContain("very-secret");
  });
});

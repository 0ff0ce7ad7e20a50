import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { addBallast, seedVolume } from "../helpers/volume.js";
import { alteredCopy } from "../helpers/altered-archive.js";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** A seeded volume (with `ballastMiB` of extra rows to make backups take a while) and a logged-in client. */
async function setup(options: { ballastMiB?: number; env?: Record<string, string> } = {}) {
  const dataDir = tempDir("lds-srv-");
  await seedVolume(dataDir);
  if (options.ballastMiB) addBallast(dataDir, options.ballastMiB);
  const s = await startServer(dataDir, options.env);
  servers.push(s);
  const api = client(s.url);
  await api.login();
  const backups = tempDir("lds-dest-");
  return { dataDir, backups, api, server: s };
}
const config = (dir: string, extra: Record<string, unknown> = {}) => ({
  destination: { type: "local", path: dir },
  schedule: { preset: "off" },
  retention: { keep: null },
  compression: "none",
  ...extra,
});
const finished = (api: ReturnType<typeof client>) =>
  eventually(async () => {
    const status = (await api.get("/api/backup/status")).json;
    return !status.running && status.lastResult ? status : undefined;
  });

describe("backups through the API", () => {
  it("starts in the background, refuses a second start, reports progress and the result", async () => {
    const { api, backups } = await setup({ ballastMiB: 150 });
    await api.put("/api/backup/config", config(backups));
    // As `curl -X POST -H 'content-type: application/json'` sends it: a JSON content type and no body.
    const first = await api.request("POST", "/api/backup", undefined, { "content-type": "application/json" });
    expect(first.status).toBe(202);
    expect(first.json).toMatchObject({ started: true });
    const second = await api.post("/api/backup");
    expect(second.status).toBe(409);
    expect(second.json.error).toBe("backup_running");
    const during = (await api.get("/api/backup/status")).json;
    expect(during.running).toBe(true);
    expect(during.progress.trigger).toBe("api");

    const status = await finished(api);
    expect(status.lastResult).toMatchObject({ ok: true, trigger: "api", libraries: 2 });
    expect(status.lastResult.archive).toMatch(/^lds-backup-\d{8}T\d{6}Z\.tar$/);
    const listing = await api.get("/api/backups");
    expect(listing.json.archives.map((a: { name: string }) => a.name)).toEqual([status.lastResult.archive]);
    expect((await runCli("lds", ["verify", path.join(backups, status.lastResult.archive)])).exitCode).toBe(0);
  });

  it("downloads an archive whole and by range, and rejects names that are not archives", async () => {
    const { api, backups } = await setup();
    await api.put("/api/backup/config", config(backups));
    await api.post("/api/backup");
    const { lastResult } = await finished(api);
    const onDisk = fs.readFileSync(path.join(backups, lastResult.archive));

    const whole = await fetch(`${servers[0]!.url}/api/backups/${lastResult.archive}/download`, { headers: { cookie: api.cookie! } });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-length")).toBe(String(onDisk.length));
    const body = Buffer.from(await whole.arrayBuffer());
    expect(createHash("sha256").update(body).digest("hex")).toBe(lastResult.sha256);

    const part = await fetch(`${servers[0]!.url}/api/backups/${lastResult.archive}/download`, { headers: { cookie: api.cookie!, range: "bytes=100-199" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 100-199/${onDisk.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(onDisk.subarray(100, 200))).toBe(true);
    const beyond = await api.get(`/api/backups/${lastResult.archive}/download`, { range: `bytes=${onDisk.length + 10}-` });
    expect(beyond.status).toBe(416);

    for (const name of ["..%2F..%2Fsecret.key", "..%2Flds.db", "%2Fetc%2Fpasswd", "notes.txt", "lds-backup-20260101T000000Z.tar%00.txt"]) {
      const attempt = await api.get(`/api/backups/${name}/download`);
      expect(attempt.status, name).toBe(400);
      expect(attempt.json.error).toBe("validation_error");
    }
    expect((await api.get("/api/backups/lds-backup-20200101T000000Z.tar/download")).status).toBe(404);
  });

  it("archives in S3 are not served: a clear error says where they are", async () => {
    const { api } = await setup();
    await api.put("/api/backup/config", { ...config("/x"), destination: { type: "s3", bucket: "my-bucket", prefix: "lds", endpoint: "http://127.0.0.1:9" } });
    const response = await api.get("/api/backups/lds-backup-20260101T000000Z.tar/download");
    expect(response.status).toBe(409);
    expect(response.json).toMatchObject({ error: "not_downloadable" });
    expect(response.json.message).toContain("s3://my-bucket/lds/lds-backup-20260101T000000Z.tar");
  });

  it("a schedule fires without a restart, retention keeps the newest N, and turning it off clears the next run", async () => {
    const { api, backups } = await setup();
    // Every 2 seconds (croner takes a seconds field), keeping 2 archives.
    await api.put("/api/backup/config", config(backups, { schedule: { preset: "custom", cron: "*/2 * * * * *" }, retention: { keep: 2 } }));
    expect((await api.get("/api/backup/status")).json.nextRun).not.toBeNull();
    await eventually(async () => fs.readdirSync(backups).filter((n) => n.endsWith(".tar")).length >= 2 && (await api.get("/api/backup/status")).json.lastResult?.trigger === "schedule", 30_000);
    const oldest = fs
      .readdirSync(backups)
      .filter((n) => n.endsWith(".tar"))
      .sort()[0];
    await new Promise((r) => setTimeout(r, 4500));
    // Stop the schedule and let a run in flight finish (archive written, then pruned) before counting.
    await api.put("/api/backup/config", config(backups, { schedule: { preset: "off" }, retention: { keep: 2 } }));
    expect((await api.get("/api/backup/status")).json.nextRun).toBeNull();
    const status = await finished(api);
    expect(status.lastResult.ok).toBe(true);
    const names = fs.readdirSync(backups).filter((n) => n.endsWith(".tar"));
    expect(names.length).toBe(2);
    expect(names.sort().at(-1)).toBe(status.lastResult.archive);
    // Later runs pruned the oldest archive.
    expect(names).not.toContain(oldest);
  });

  it("never overlaps with lds-backup from cron: the shared lock gives 409, and a scheduled run is recorded as skipped", async () => {
    const { api, backups, dataDir } = await setup();
    await api.put("/api/backup/config", config(backups));
    // What a running lds-backup holds.
    fs.writeFileSync(path.join(dataDir, "backup.lock"), JSON.stringify({ pid: process.pid, hostname: os.hostname(), processStart: null, purpose: "backup", since: "2026-11-21T03:17:00Z" }));
    const refused = await api.post("/api/backup");
    expect(refused.status).toBe(409);
    expect(refused.json.message).toContain(`pid ${process.pid}`);

    await api.put("/api/backup/config", config(backups, { schedule: { preset: "custom", cron: "* * * * * *" } }));
    const skipped = await eventually(async () => (await api.get("/api/backup/status")).json.lastSkipped);
    expect(skipped.reason).toMatch(/already running/);
    await api.put("/api/backup/config", config(backups));
    fs.rmSync(path.join(dataDir, "backup.lock"));
    expect(fs.readdirSync(backups)).toEqual([]);
  });

  it("keeps serving during a backup while a client writes through the API; the archive holds a committed state", async () => {
    const { api, backups } = await setup({ ballastMiB: 100 });
    await api.put("/api/backup/config", config(backups));
    await api.post("/api/backup");
    let writes = 0;
    let running = true;
    while (running) {
      const response = await api.put("/api/backup/config", config(backups, { retention: { keep: 1000 + writes } }));
      expect(response.status).toBe(200);
      writes++;
      running = (await api.get("/api/backup/status")).json.running;
    }
    expect(writes).toBeGreaterThan(3);
    const { lastResult } = await finished(api);
    const archive = path.join(backups, lastResult.archive);
    expect((await runCli("lds", ["verify", archive])).exitCode).toBe(0);
    const target = tempDir();
    expect((await runCli("restore", [archive, "--data-dir", target, "--yes"])).exitCode).toBe(0);
    const db = new Database(path.join(target, "lds.db"), { readonly: true });
    const keep = JSON.parse(db.prepare("SELECT value FROM settings WHERE key = 'backup.config'").pluck().get() as string).retention.keep;
    db.close();
    expect(keep === null || (keep >= 1000 && keep < 1000 + writes)).toBe(true);
  });
});

describe("the licence", () => {
  it("once expired closes the public API with 403, while login and every backup endpoint keep working", async () => {
    const dataDir = tempDir();
    fs.writeFileSync(path.join(dataDir, "license.json"), JSON.stringify({ licensee: "Acme", expiresAt: "2020-01-01T00:00:00Z" }));
    await seedVolume(dataDir);
    const s = await startServer(dataDir);
    servers.push(s);
    const api = client(s.url);
    const publicCall = await api.get("/v2/libs/search?libraryName=react");
    expect(publicCall.status).toBe(403);
    expect(publicCall.json).toMatchObject({ error: "license_expired" });
    expect(publicCall.json.message).toContain("expired on 2020-01-01");
    expect((await api.post("/v1/refresh", {})).json.error).toBe("license_expired");
    expect((await api.post("/mcp", {})).json.error).toBe("license_expired");

    expect((await api.login()).status).toBe(200);
    const backups = tempDir();
    expect((await api.put("/api/backup/config", config(backups))).status).toBe(200);
    expect((await api.post("/api/backup")).status).toBe(202);
    const status = await finished(api);
    expect(status.lastResult.ok).toBe(true);
    expect((await api.get("/api/backups")).json.archives).toHaveLength(1);
    expect((await api.get(`/api/backups/${status.lastResult.archive}/download`)).status).toBe(200);
    expect((await api.get("/api/health")).status).toBe(200);

    // A licence renewed in place applies without a restart.
    fs.writeFileSync(path.join(dataDir, "license.json"), JSON.stringify({ licensee: "Acme", expiresAt: "2099-01-01T00:00:00Z" }));
    // (past the licence check, this request without an API key is refused by authentication instead)
    expect((await api.get("/v2/libs/search?libraryName=react")).json.error).toBe("invalid_api_key");
  });

  it("an unreadable licence closes the public API with license_invalid", async () => {
    const dataDir = tempDir();
    const s = await startServer(dataDir, { LDS_LICENSE: "{not json" });
    servers.push(s);
    const response = await client(s.url).get("/v2/context?libraryId=/a/b");
    expect(response.status).toBe(403);
    expect(response.json.error).toBe("license_invalid");
  });
});

describe("encrypted backups through the API (issue 15)", () => {
  it("encrypt to the configured age recipients; without them the status warns that the key is in clear", async () => {
    const { api, backups, dataDir } = await setup();
    const work = tempDir("lds-age-keys-");
    const identity = path.join(work, "identity.txt");
    execFileSync("age-keygen", ["-o", identity], { stdio: "ignore" });
    const recipient = execFileSync("age-keygen", ["-y", identity], { encoding: "utf8" }).trim();

    expect((await api.put("/api/backup/config", config(backups))).json.encryption).toEqual({ recipients: [] });
    expect((await api.post("/api/backup")).status).toBe(202);
    const plain = await finished(api);
    expect(plain.lastResult).toMatchObject({ ok: true, encryption: null });
    expect(plain.lastResult.warnings).toEqual([expect.objectContaining({ code: "archive_key_in_clear", hint: expect.stringContaining("encryption.recipients in the backup configuration") })]);

    const bad = await api.put("/api/backup/config", config(backups, { encryption: { recipients: ["age1oops"] } }));
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('encryption.recipients: "age1oops" is not an age recipient.');
    const saved = await api.put("/api/backup/config", config(backups, { encryption: { recipients: [recipient] } }));
    expect(saved.status, saved.text).toBe(200);
    expect((await api.get("/api/backup/config")).json.encryption).toEqual({ recipients: [recipient] });
    // One second later at least, so that the archive names differ.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await api.post("/api/backup")).status).toBe(202);
    const encrypted = await eventually(async () => {
      const status = (await api.get("/api/backup/status")).json;
      return !status.running && status.lastResult?.archive?.endsWith(".tar.age") ? status : undefined;
    });
    expect(encrypted.lastResult).toMatchObject({ ok: true, encryption: "age (1 recipient)", warnings: [] });
    const file = path.join(backups, encrypted.lastResult.archive);
    const verified = await runCli("lds", ["verify", file, "--identity", identity, "--json"]);
    expect(verified.exitCode, verified.stderr).toBe(0);
    // The server validates a restore without identities: an encrypted archive is refused, never half-read.
    const validate = await api.post("/api/restore/validate", { name: encrypted.lastResult.archive });
    expect(validate.status).toBe(422);
    expect(validate.json.error).toBe("archive_locked");
    expect(fs.existsSync(path.join(dataDir, "lds.db"))).toBe(true);
  });
});

describe("restore drills run by the server (issue 15)", () => {
  it("drill each new archive when configured, and a failed drill of the newest one is a warning in the status", async () => {
    const { api, backups } = await setup();
    expect((await api.put("/api/backup/config", config(backups, { drill: { schedule: "after-backup" } }))).status).toBe(200);
    expect((await api.post("/api/backup")).status).toBe(202);
    const drilled = await eventually(async () => {
      const status = (await api.get("/api/backup/status")).json;
      return status.lastDrill && !status.running ? status : undefined;
    }, 60_000);
    expect(drilled.lastDrill).toMatchObject({ ok: true, archive: drilled.lastResult.archive });
    expect(drilled.lastDrill.checks.map((c: { part: string }) => c.part)).toContain("canary queries");
    expect(drilled.warnings).toEqual([]);

    // A newer archive, damaged with valid checksums (one snippet gone): only a drill can tell.
    const newer = drilled.lastResult.archive.replace(/\d{8}T\d{6}Z/, "29991231T235959Z");
    alteredCopy(path.join(backups, drilled.lastResult.archive), path.join(backups, newer), (db) => db.prepare("DELETE FROM snippets WHERE id = (SELECT max(id) FROM snippets)").run());
    expect((await api.post("/api/backup/drill")).status).toBe(202);
    const failed = await eventually(async () => {
      const status = (await api.get("/api/backup/status")).json;
      return status.lastDrill?.archive === newer ? status : undefined;
    }, 60_000);
    expect(failed.lastDrill).toMatchObject({ ok: false, error: { code: "archive_corrupt" } });
    expect(failed.lastDrill.error.message).toMatch(/the restore drill found that \/acme\/\w+ holds 2 snippets, the manifest recorded 3/);
    expect(failed.warnings).toEqual([expect.objectContaining({ code: "restore_drill_failed", message: expect.stringContaining(newer) })]);
  });
});

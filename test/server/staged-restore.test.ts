import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { makeArchive, readEntries, writeRawTar } from "../helpers/archives.js";
import { freePort } from "../helpers/s3-server.js";
import { tempDir } from "../helpers/temp.js";
import { client, eventually, serverPid, startServer } from "../helpers/server.js";
import { fingerprintTree, libraryIds, seedVolume } from "../helpers/volume.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const libraries = libraryIds;

/** A server with a backup of its two libraries, and a third library added after that backup. */
async function serverWithBackup(env: Record<string, string>, port = 0) {
  const dataDir = tempDir("lds-staged-");
  await seedVolume(dataDir);
  const s = await startServer(dataDir, { INVOCATION_ID: "", ...env }, port);
  cleanups.push(() => s.stop());
  const api = client(s.url);
  await api.login();
  const backups = tempDir("lds-staged-backups-");
  await api.put("/api/backup/config", { destination: { type: "local", path: backups }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" });
  await api.post("/api/backup");
  const status = await eventually(async () => (await api.get("/api/backup/status")).json.lastResult);
  const db = new Database(path.join(dataDir, "lds.db"));
  db.prepare("INSERT INTO libraries (id, title, source) VALUES ('/after/backup', 'later', 'git')").run();
  db.close();
  return { dataDir, api, server: s, archive: status.lastResult?.archive ?? status.archive };
}

/** Stop whatever server process now holds the volume (a re-executed successor has its own pid). */
async function stopVolumeServer(dataDir: string) {
  const pid = serverPid(dataDir);
  if (pid) process.kill(pid, "SIGTERM");
  await eventually(async () => !fs.existsSync(path.join(dataDir, "server.lock")));
}

describe("restore from the server", () => {
  it("validates, stages on confirmation, restarts itself (no supervisor) and comes back with the data restored", async () => {
    const port = await freePort();
    const { dataDir, api, server, archive } = await serverWithBackup({}, port);
    cleanups.push(() => stopVolumeServer(dataDir));
    expect(libraries(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets", "/after/backup"]);

    const validated = await api.post("/api/restore/validate", { name: archive });
    expect(validated.status).toBe(200);
    expect(validated.json).toMatchObject({ name: archive, restorable: true, reason: null, needsMigration: false });
    expect(validated.json.libraries.map((l: { id: string }) => l.id)).toEqual(["/acme/gadgets", "/acme/widgets"]);
    expect(validated.json.createdAt).toMatch(/^\d{4}-/);

    expect((await api.post("/api/restore/stage", { name: archive, confirm: false })).status).toBe(400);
    expect((await api.post("/api/restore/stage", { confirm: true })).json.message).toMatch(/exactly one of name or uploadId/);
    expect((await api.post("/api/restore/validate", { name: "../../lds.db" })).status).toBe(400);

    const staged = await api.post("/api/restore/stage", { name: archive, confirm: true });
    expect(staged.status).toBe(202);
    expect(staged.json).toMatchObject({ staged: true, restarting: true });

    // The exit event, not the execa promise: that one also waits for stdout, which the successor inherited.
    const exitCode = await new Promise<number | null>((resolve) => (server.child.exitCode !== null ? resolve(server.child.exitCode) : server.child.once("exit", (code) => resolve(code))));
    expect(exitCode).toBe(0);
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined))?.ok);
    expect(serverPid(dataDir)).not.toBe(server.child.pid);
    await eventually(async () => server.output().includes("Applied the staged restore"));

    expect(libraries(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
    const [kept] = fs.readdirSync(dataDir).filter((n) => n.startsWith("pre-restore-"));
    expect(libraries(path.join(dataDir, kept!))).toEqual(["/acme/gadgets", "/acme/widgets", "/after/backup"]);
    expect(fs.existsSync(path.join(dataDir, "restore-staged"))).toBe(false);
    const again = client(`http://127.0.0.1:${port}`);
    expect((await again.login()).status).toBe(200);
  });

  it("under a supervisor, exits with 75 and applies the staged restore at the next start", async () => {
    const { dataDir, api, server, archive } = await serverWithBackup({ LDS_SUPERVISED: "1" });
    expect((await api.post("/api/restore/stage", { name: archive, confirm: true })).status).toBe(202);
    expect((await server.child).exitCode).toBe(75);
    expect(fs.existsSync(path.join(dataDir, "restore-staged", "archive.tar"))).toBe(true);

    const restarted = await startServer(dataDir);
    cleanups.push(() => restarted.stop());
    expect(restarted.output()).toContain("Applied the staged restore");
    expect(libraries(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
  });

  it("restores an encrypted archive with the identity sent for it, which it never keeps (issue 15)", async () => {
    const dataDir = tempDir("lds-staged-age-");
    await seedVolume(dataDir);
    const keys = tempDir("lds-staged-age-keys-");
    execFileSync("age-keygen", ["-o", path.join(keys, "id.txt")], { stdio: "ignore" });
    const identity = fs.readFileSync(path.join(keys, "id.txt"), "utf8");
    const recipient = execFileSync("age-keygen", ["-y", path.join(keys, "id.txt")], { encoding: "utf8" }).trim();
    const server = await startServer(dataDir, { INVOCATION_ID: "", LDS_SUPERVISED: "1" });
    cleanups.push(() => server.stop());
    const api = client(server.url);
    await api.login();
    const backups = tempDir("lds-staged-age-backups-");
    const config = { destination: { type: "local", path: backups }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none", encryption: { recipients: [recipient] } };
    expect((await api.put("/api/backup/config", config)).status).toBe(200);
    await api.post("/api/backup");
    const archive = (await eventually(async () => (await api.get("/api/backup/status")).json.lastResult?.archive)) as string;
    expect(archive).toMatch(/\.tar\.age$/);
    const db = new Database(path.join(dataDir, "lds.db"));
    db.prepare("INSERT INTO libraries (id, title, source) VALUES ('/after/backup', 'later', 'git')").run();
    db.close();

    const locked = await api.post("/api/restore/validate", { name: archive });
    expect(locked.status).toBe(422);
    expect(locked.json.error).toBe("archive_locked");
    const validated = await api.post("/api/restore/validate", { name: archive, identity });
    expect(validated.status, validated.text).toBe(200);
    expect(validated.json).toMatchObject({ restorable: true, encryption: { format: "age", stanzas: ["X25519"] } });
    expect((await api.post("/api/restore/stage", { name: archive, confirm: true, identity: "not an identity" })).status).toBe(400);
    expect((await api.post("/api/restore/stage", { name: archive, confirm: true, identity })).status).toBe(202);
    expect((await server.child).exitCode).toBe(75);
    // Staged decrypted, inside the data volume; no identity was written anywhere there.
    const stagedFiles = fs.readdirSync(path.join(dataDir, "restore-staged"));
    expect(stagedFiles).toContain("archive.tar");
    const key = identity.split("\n").find((l) => l.startsWith("AGE-SECRET-KEY-"))!;
    for (const file of Object.keys(fingerprintTree(dataDir))) expect(fs.readFileSync(path.join(dataDir, file)).includes(Buffer.from(key)), file).toBe(false);
    expect(server.output()).not.toContain(key);

    const restarted = await startServer(dataDir);
    cleanups.push(() => restarted.stop());
    expect(restarted.output()).toContain("Applied the staged restore");
    expect(libraries(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
  });

  it("accepts an uploaded archive within the size limit, and refuses damaged or oversized uploads", async () => {
    const { archive: file } = await makeArchive({ libraries: [{ id: "/uploaded/lib" }] });
    const bytes = fs.readFileSync(file);
    const dataDir = tempDir();
    await seedVolume(dataDir, { libraries: [{ id: "/current/lib" }] });
    const s = await startServer(dataDir, { LDS_SUPERVISED: "1", LDS_RESTORE_UPLOAD_MAX_BYTES: String(bytes.length + 10) });
    const api = client(s.url);
    await api.login();
    const upload = (body: Buffer) => fetch(`${s.url}/api/restore/upload`, { method: "POST", headers: { cookie: api.cookie!, "content-type": "application/octet-stream" }, body: new Uint8Array(body) });

    const tooBig = await upload(Buffer.concat([bytes, Buffer.alloc(100)]));
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).error).toBe("payload_too_large");
    const damaged = Buffer.from(bytes);
    damaged[bytes.length - 2000]! ^= 0xff;
    const bad = await upload(damaged);
    expect(bad.status).toBe(422);
    expect((await bad.json()).error).toBe("archive_corrupt");

    // A manifest that declares a 2^50-byte file is the archive's fault (422), not a full disk (507), and names no path.
    const entries = await readEntries(file);
    const manifest = JSON.parse(entries[0]!.body!.toString());
    manifest.files[0].size = 2 ** 50;
    entries[0]!.body = Buffer.from(JSON.stringify(manifest));
    const huge = await upload(fs.readFileSync(writeRawTar(path.join(tempDir(), "huge.tar"), entries)));
    expect(huge.status).toBe(422);
    const hugeBody = (await huge.json()) as { error: string; message: string };
    expect(hugeBody).toMatchObject({ error: "archive_corrupt", message: expect.stringMatching(/manifest\.json is invalid at \/files\/0\/size: must be <= 4398046511104/) });
    expect(hugeBody.message).not.toContain(dataDir);

    const good = await upload(bytes);
    expect(good.status).toBe(201);
    const summary = (await good.json()) as { uploadId: string; libraries: Array<{ id: string }>; restorable: boolean };
    expect(summary.restorable).toBe(true);
    expect(summary.libraries.map((l) => l.id)).toEqual(["/uploaded/lib"]);
    expect((await api.post("/api/restore/stage", { uploadId: summary.uploadId, confirm: true })).status).toBe(202);
    expect((await s.child).exitCode).toBe(75);
    const restarted = await startServer(dataDir);
    cleanups.push(() => restarted.stop());
    expect(libraries(dataDir)).toEqual(["/uploaded/lib"]);
  });

  it("a staged archive that fails at start is kept aside and the server starts on its current data", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir, { libraries: [{ id: "/current/lib" }] });
    fs.mkdirSync(path.join(dataDir, "restore-staged"));
    fs.writeFileSync(path.join(dataDir, "restore-staged", "archive.tar"), "not an archive at all");
    const s = await startServer(dataDir);
    cleanups.push(() => s.stop());
    expect(s.output()).toMatch(/The staged restore of .* failed and was not applied/);
    expect(libraries(dataDir)).toEqual(["/current/lib"]);
    const [failed] = fs.readdirSync(dataDir).filter((n) => n.startsWith("restore-staged-failed-"));
    expect(fs.readFileSync(path.join(dataDir, failed!, "error.txt"), "utf8")).toMatch(/^archive_corrupt:/);
    expect((await fetch(`${s.url}/api/health`)).status).toBe(200);
  });
});

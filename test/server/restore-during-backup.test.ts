import fs from "node:fs";
import path from "node:path";
import type { ResultPromise } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { makeArchive } from "../helpers/archives.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { client, eventually, startServer } from "../helpers/server.js";
import { addBallast, libraryIds, seedVolume } from "../helpers/volume.js";

/**
 * Issue 39, item 6: a restore staged while a backup runs must neither cut the backup off nor take the server down.
 * A slow CLI backup is `lds backup` with LDS_FAILPOINT=backup-holding-lock: it holds the volume (registered as its
 * user, backup.lock taken) for 65 s before it copies anything, longer than the 60 s a starting server used to wait.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const config = (dir: string) => ({ destination: { type: "local", path: dir }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" });

/** A supervised server (a staged restore makes it exit 75) with one archive of its data at a local destination. */
async function serverWithArchive(options: { ballastMiB?: number } = {}) {
  const dataDir = tempDir("lds-rdb-");
  await seedVolume(dataDir);
  if (options.ballastMiB) addBallast(dataDir, options.ballastMiB);
  const server = await startServer(dataDir, { LDS_SUPERVISED: "1" });
  cleanups.push(() => (server.child.exitCode === null ? server.stop() : undefined));
  const api = client(server.url);
  await api.login();
  const backups = tempDir("lds-rdb-backups-");
  expect((await api.put("/api/backup/config", config(backups))).status).toBe(200);
  expect((await api.post("/api/backup")).status).toBe(202);
  const archive = (await finished(api)).lastResult.archive as string;
  return { dataDir, server, api, backups, archive };
}

const finished = (api: ReturnType<typeof client>) =>
  eventually(async () => {
    const status = (await api.get("/api/backup/status")).json;
    return !status.running && status.lastResult ? status : undefined;
  }, 120_000);

/** `lds backup` that holds the volume for 65 s; resolves once it holds backup.lock (wrapped: the child is a thenable). */
async function slowCliBackup(dataDir: string, to: string): Promise<{ cli: ResultPromise }> {
  const child = spawnCli("lds", ["backup", "--data-dir", dataDir, "--to", to], { LDS_FAILPOINT: "backup-holding-lock" });
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  await eventually(async () => lockHolder(dataDir) === child.pid, 30_000);
  return { cli: child };
}

function lockHolder(dataDir: string): number | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, "backup.lock"), "utf8")).pid;
  } catch {
    return undefined;
  }
}

/** Whether the server holds backup.lock for a restore being staged. */
function heldForRestore(dataDir: string): boolean {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, "backup.lock"), "utf8")).purpose === "restore staged";
  } catch {
    return false;
  }
}

const exited = (child: ResultPromise) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));

describe("a restore staged while a backup runs (issue 39, item 6)", () => {
  it("refuses to stage while the server's own backup runs (409 backup_running); the backup completes, then staging works", async () => {
    const { dataDir, server, api, archive } = await serverWithArchive({ ballastMiB: 150 });
    expect((await api.post("/api/backup")).status).toBe(202);
    const refused = await api.post("/api/restore/stage", { name: archive, confirm: true });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error).toBe("backup_running");
    expect(refused.json.message).toMatch(/^This server's backup \(started by api at \d{4}-.*\) is running/);
    expect(refused.json.hint).toMatch(/Wait for it to finish \(GET \/api\/backup\/status shows its progress\), then stage the restore again/);
    expect(fs.existsSync(path.join(dataDir, "restore-staged"))).toBe(false);

    // The backup was not cut off: it finishes, and the server still serves.
    const status = await finished(api);
    expect(status.lastResult).toMatchObject({ ok: true, trigger: "api" });
    expect(status.lastResult.archive).not.toBe(archive);
    expect(server.child.exitCode).toBeNull();
    // Nothing was held by the refused request: staging now goes through and restarts the server.
    const staged = await api.post("/api/restore/stage", { name: archive, confirm: true });
    expect(staged.status, staged.text).toBe(202);
    expect(await exited(server.child)).toBe(75);
  }, 240_000);

  it("no backup starts while a restore is being staged: the check and the staging do not race", async () => {
    const { dataDir, server, api, backups, archive } = await serverWithArchive({ ballastMiB: 150 });
    // The stage request verifies the 150 MiB archive before it stages it; a backup asked for meanwhile would be
    // cut off by the restart that follows.
    let answered = false;
    const staging = api.post("/api/restore/stage", { name: archive, confirm: true }).finally(() => (answered = true));
    // Asked for while the archive is verified (a lds-verify-* folder in the volume) or the lock is held.
    await eventually(async () => answered || heldForRestore(dataDir) || fs.readdirSync(dataDir).some((n) => n.startsWith("lds-verify-")), 60_000);
    expect(answered, "the stage request answered before a backup could be asked for meanwhile").toBe(false);
    const backup = await api.post("/api/backup");
    expect(backup.status, backup.text).toBe(409);
    expect(backup.json).toMatchObject({ error: "volume_locked", message: "A restore is being staged: the server restarts to apply it and starts no backup before." });
    expect((await staging).status).toBe(202);
    expect(await exited(server.child)).toBe(75);
    expect(fs.readdirSync(path.join(dataDir, "restore-staged"))).toContain("archive.tar");
    // No backup ran, so none was cut off: the destination holds the one archive, the volume no backup's leftovers.
    expect(fs.readdirSync(backups)).toEqual([archive]);
    expect(fs.readdirSync(dataDir).filter((n) => n.startsWith("backup-staging-"))).toEqual([]);
  }, 240_000);

  it("refuses to stage while a CLI `lds backup` holds the volume, naming its pid; staging works once it is gone", async () => {
    const { dataDir, server, api, archive } = await serverWithArchive();
    const { cli } = await slowCliBackup(dataDir, tempDir("lds-rdb-cli-"));
    const refused = await api.post("/api/restore/stage", { name: archive, confirm: true });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error).toBe("backup_running");
    expect(refused.json.message).toMatch(new RegExp(`^A backup of .* is running \\(lds backup, pid ${cli.pid} on .*, since \\d{4}-.*\\)`));
    expect(refused.json.hint).toMatch(/Wait for that backup to finish, then stage the restore again/);
    expect(fs.existsSync(path.join(dataDir, "restore-staged"))).toBe(false);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);

    // A backup killed with SIGKILL leaves its lock behind: recovered as stale, it does not block staging.
    cli.kill("SIGKILL");
    await exited(cli);
    expect((await api.post("/api/restore/stage", { name: archive, confirm: true })).status).toBe(202);
    expect(await exited(server.child)).toBe(75);
  }, 120_000);

  it("a server starting into a staged restore waits for a CLI backup that holds the volume, then applies the restore and serves", async () => {
    const dataDir = tempDir("lds-rdb-start-");
    await seedVolume(dataDir, { libraries: [{ id: "/current/lib" }] });
    const { archive } = await makeArchive({ libraries: [{ id: "/restored/lib" }] });
    fs.mkdirSync(path.join(dataDir, "restore-staged"));
    fs.copyFileSync(archive, path.join(dataDir, "restore-staged", "archive.tar"));
    const to = tempDir("lds-rdb-start-backups-");
    const { cli } = await slowCliBackup(dataDir, to);

    const server = await startServer(dataDir);
    cleanups.push(() => server.stop());
    const out = server.output();
    const waiting = out.indexOf(`Waiting for lds backup (pid ${cli.pid} on `);
    expect(waiting, out).toBeGreaterThan(-1);
    expect(out).toMatch(/, running since \d{4}-[^)]*\) to finish before applying the staged restore \(waited 0 s so far\)\. To go on sooner, stop the backup \(kill -TERM \d+/);
    expect(out).toContain(`"waitingFor":[{"command":"lds backup","pid":${cli.pid},`);
    // It reported its wait as it went, and applied the restore only once the backup was done.
    expect(out.match(/Waiting for lds backup/g)!.length).toBeGreaterThan(1);
    expect(out.indexOf("Applied the staged restore")).toBeGreaterThan(waiting);
    const backup = await cli;
    expect(backup.exitCode, String(backup.stderr)).toBe(0);
    expect(fs.readdirSync(to).filter((n) => n.endsWith(".tar"))).toHaveLength(1);
    expect(libraryIds(dataDir)).toEqual(["/restored/lib"]);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  }, 240_000);

  it("lds-restore and lds secrets rotate-key refuse while a CLI backup holds the volume (backup_running), changing nothing", async () => {
    const dataDir = tempDir("lds-rdb-offline-");
    await seedVolume(dataDir, { libraries: [{ id: "/current/lib" }] });
    const { archive } = await makeArchive({ libraries: [{ id: "/restored/lib" }] });
    const { cli } = await slowCliBackup(dataDir, tempDir("lds-rdb-offline-backups-"));
    const key = fs.readFileSync(path.join(dataDir, "secret.key"));

    const restore = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
    expect(restore.exitCode, restore.stderr).toBe(5);
    expect(restore.stderr).toMatch(new RegExp(`is open by lds backup \\(pid ${cli.pid}\\); nothing was changed`));
    expect(restore.stderr).toMatch(new RegExp(`Wait for the backup \\(pid ${cli.pid}\\) to finish`));
    const rotate = await runCli("lds", ["secrets", "rotate-key", "--data-dir", dataDir]);
    expect(rotate.exitCode, rotate.stderr).toBe(5);
    expect(rotate.stderr).toMatch(new RegExp(`Wait for the backup \\(pid ${cli.pid}\\) to finish`));

    expect(libraryIds(dataDir)).toEqual(["/current/lib"]);
    expect(fs.readFileSync(path.join(dataDir, "secret.key")).equals(key)).toBe(true);
    expect(cli.exitCode).toBeNull();
  }, 120_000);

  it("a restore drill under way is not cut off: staging and a second drill are refused with 409 backup_running", async () => {
    // LDS_FAILPOINT=drill-under-way keeps the drill going for 30 s without blocking the server.
    const dataDir = tempDir("lds-rdb-");
    await seedVolume(dataDir);
    const server = await startServer(dataDir, { LDS_SUPERVISED: "1", LDS_FAILPOINT: "drill-under-way" });
    cleanups.push(() => (server.child.exitCode === null ? server.stop() : undefined));
    const api = client(server.url);
    await api.login();
    expect((await api.post("/api/backup/drill")).status).toBe(202);
    const again = await api.post("/api/backup/drill");
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: "backup_running", message: expect.stringMatching(/restore drill \(started at .+\) is already running/) });
    const staged = await api.post("/api/restore/stage", { name: "lds-backup-20261121T151441Z.tar", confirm: true });
    expect(staged.status, staged.text).toBe(409);
    expect(staged.json).toMatchObject({ error: "backup_running", message: expect.stringContaining("restore drill"), hint: expect.stringContaining("stage the restore again") });
    // Nothing was staged and the server did not restart.
    expect(fs.existsSync(path.join(dataDir, "restore-staged"))).toBe(false);
    expect((await api.get("/api/health")).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  }, 60_000);
});

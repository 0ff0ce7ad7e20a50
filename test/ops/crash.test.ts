import fs from "node:fs";
import path from "node:path";
import type { ResultPromise } from "execa";
import { describe, expect, it } from "vitest";
import { makeArchive } from "../helpers/archives.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { addBallast, fingerprintTree, libraryIds, seedVolume } from "../helpers/volume.js";

/** Only the files a restore may replace: locks and leftovers are judged separately. */
const dataFiles = (dir: string) => Object.fromEntries(Object.entries(fingerprintTree(dir)).filter(([name]) => /^(lds\.db|vectors\.db|secret\.key)(-wal|-shm)?$/.test(name)));

/** Wait until `predicate` holds, polling fast: the window to interrupt in is short. */
async function when(predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function serveOnce(dataDir: string): Promise<string> {
  const server = spawnCli("lds", ["serve", "--data-dir", dataDir, "--port", "0"]);
  let out = "";
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("LDS is serving")) resolve();
    });
    server.on("exit", () => reject(new Error(out)));
  });
  server.kill("SIGTERM");
  await server;
  return out;
}

describe("crash safety of restore (rule 6)", () => {
  it.each([
    ["restore-before-journal", "as it was"],
    ["restore-journal-written", "restored"],
    ["restore-moving-out", "restored"],
    ["restore-moved-out", "restored"],
    ["restore-moving-in", "restored"],
  ])("killed at %s, the next start finds the volume %s", async (failpoint, expected) => {
    const { archive, dataDir: source } = await makeArchive();
    const dataDir = tempDir("lds-target-");
    await seedVolume(dataDir, { libraries: [{ id: "/old/library" }] });
    const before = dataFiles(dataDir);
    const archivedKey = fs.readFileSync(path.join(source, "secret.key"));

    const crashed = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"], { LDS_FAILPOINT: failpoint });
    expect(crashed.exitCode).not.toBe(0);

    const log = await serveOnce(dataDir);
    const leftovers = fs.readdirSync(dataDir).filter((n) => n.startsWith("restore-") || n === "restore-journal.json");
    expect(leftovers).toEqual([]);
    if (expected === "as it was") {
      expect(dataFiles(dataDir)).toEqual(before);
      expect(log).toContain("Discarded 1 unfinished restore folder");
    } else {
      expect(log).toContain("Finished an interrupted restore");
      expect(libraryIds(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
      expect(fs.readFileSync(path.join(dataDir, "secret.key")).equals(archivedKey)).toBe(true);
      const [kept] = fs.readdirSync(dataDir).filter((n) => n.startsWith("pre-restore-"));
      expect(libraryIds(path.join(dataDir, kept!))).toEqual(["/old/library"]);
      expect(dataFiles(path.join(dataDir, kept!))["lds.db"]).toBe(before["lds.db"]);
    }
  });

  it("the next lds-restore also finishes an interrupted restore and says so", async () => {
    const { archive } = await makeArchive();
    const dataDir = tempDir("lds-target-");
    await seedVolume(dataDir, { libraries: [{ id: "/old/library" }] });
    await runCli("restore", [archive, "--data-dir", dataDir, "--yes"], { LDS_FAILPOINT: "restore-moving-out" });
    const again = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Finished an interrupted restore from .*: the data volume now holds the restored data/m);
    expect(libraryIds(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
  });
});

describe("interrupting a backup or a restore", () => {
  async function bigVolume() {
    const dataDir = tempDir("lds-big-");
    await seedVolume(dataDir);
    addBallast(dataDir, 300);
    return dataDir;
  }
  const hiddenTemp = (dir: string) => fs.existsSync(dir) && fs.readdirSync(dir).some((n) => n.endsWith(".tmp"));

  it.each([["SIGINT"], ["SIGTERM"]] as const)("%s while the archive is written leaves no archive, no staging and no lock", async (signal) => {
    const dataDir = await bigVolume();
    const out = tempDir();
    const child = spawnCli("backup", ["--data-dir", dataDir, "--to", out]);
    await when(() => hiddenTemp(out));
    child.kill(signal);
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(String(result.stderr)).toMatch(/^Error: The backup was interrupted; no archive was written./m);
    expect(fs.readdirSync(out)).toEqual([]);
    expect(fs.readdirSync(dataDir).filter((n) => n.startsWith("backup-"))).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, "backup.lock"))).toBe(false);
  });

  it("kill -9 while the archive is written leaves no archive under a final name; the next backup cleans up", async () => {
    const dataDir = await bigVolume();
    const out = tempDir();
    const child: ResultPromise = spawnCli("backup", ["--data-dir", dataDir, "--to", out]);
    await when(() => hiddenTemp(out));
    child.kill("SIGKILL");
    await child;
    expect(fs.readdirSync(out).filter((n) => !n.startsWith("."))).toEqual([]);

    const next = await runCli("backup", ["--data-dir", dataDir, "--to", out, "--json"]);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(fs.readdirSync(out)).toEqual([JSON.parse(next.stdout).name]);
    expect(fs.readdirSync(dataDir).filter((n) => n.startsWith("backup-"))).toEqual([]);
  });

  it("Ctrl-C or kill -9 while a restore unpacks leaves the volume as it was", async () => {
    const source = await bigVolume();
    const out = tempDir();
    const made = await runCli("backup", ["--data-dir", source, "--to", out, "--json"]);
    const archive = path.join(out, JSON.parse(made.stdout).name);
    const dataDir = tempDir("lds-target-");
    await seedVolume(dataDir, { libraries: [{ id: "/old/library" }] });
    const before = dataFiles(dataDir);
    const unpacking = () => fs.readdirSync(dataDir).some((n) => n.startsWith("restore-work-"));

    const interrupted = spawnCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
    await when(unpacking);
    interrupted.kill("SIGINT");
    const result = await interrupted;
    expect(result.exitCode).toBe(130);
    expect(dataFiles(dataDir)).toEqual(before);
    expect(unpacking()).toBe(false);

    const killed = spawnCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
    await when(unpacking);
    killed.kill("SIGKILL");
    await killed;
    await serveOnce(dataDir);
    expect(dataFiles(dataDir)).toEqual(before);
    expect(unpacking()).toBe(false);
    expect(libraryIds(dataDir)).toEqual(["/old/library"]);
  });
});

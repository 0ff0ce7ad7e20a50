import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { dataVolume } from "../../src/config/data-volume.js";
import { isLdsError } from "../../src/errors.js";
import { lockBackup, lockVolumeExclusive } from "../../src/locks/volume-locks.js";
import { ROOT } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/** A second process that takes the server lock, says so, and holds it until killed. */
async function holdLockInChild(root: string, env: Record<string, string> = {}) {
  const script = `
    const { lockVolumeExclusive } = await import(${JSON.stringify(path.join(ROOT, "dist/locks/volume-locks.js"))});
    const { dataVolume } = await import(${JSON.stringify(path.join(ROOT, "dist/config/data-volume.js"))});
    const { armFailpoint } = await import(${JSON.stringify(path.join(ROOT, "dist/util/failpoint.js"))});
    armFailpoint(process.env.LDS_FAILPOINT); // as the CLI does
    lockVolumeExclusive(dataVolume(${JSON.stringify(root)}), "server");
    console.log("locked");
    setInterval(() => {}, 1000);`;
  const child = execa("node", ["--input-type=module", "-e", script], { reject: false, env });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("locked") && resolve());
    child.on("exit", () => reject(new Error("child exited before locking")));
  });
  // Wrapped: an execa child is a thenable, and returning it bare from an async function would wait for its exit.
  return { child };
}

describe("volume locks", () => {
  it("refuse a second process while the first holds the volume, naming the holder", async () => {
    const root = tempDir();
    const { child } = await holdLockInChild(root);
    try {
      let caught: unknown;
      try {
        lockVolumeExclusive(dataVolume(root), "restore");
      } catch (err) {
        caught = err;
      }
      expect(isLdsError(caught, "volume_locked")).toBe(true);
      expect((caught as Error).message).toContain(`pid ${child.pid}`);
    } finally {
      child.kill("SIGKILL");
      await child;
    }
    // The holder died without releasing: its lock is stale and is recovered.
    const lock = lockVolumeExclusive(dataVolume(root), "restore");
    expect(JSON.parse(fs.readFileSync(path.join(root, "server.lock"), "utf8")).pid).toBe(process.pid);
    lock.release();
    expect(fs.existsSync(path.join(root, "server.lock"))).toBe(false);
  });

  it("recover a lock whose pid was reused by an unrelated process", () => {
    const root = tempDir();
    const recycled = { pid: process.ppid, hostname: os.hostname(), processStart: "1", purpose: "server", since: "2020-01-01T00:00:00Z" };
    fs.writeFileSync(path.join(root, "server.lock"), JSON.stringify(recycled));
    lockVolumeExclusive(dataVolume(root), "server").release();
  });

  it("treat a lock from another host as held (a shared network volume)", () => {
    const root = tempDir();
    const remote = { pid: 1, hostname: "some-other-host", processStart: null, purpose: "backup", since: "2020-01-01T00:00:00Z" };
    fs.writeFileSync(path.join(root, "backup.lock"), JSON.stringify(remote));
    expect(() => lockBackup(dataVolume(root))).toThrow(/some-other-host/);
  });

  it("is taken atomically: a lock file is never seen without its owner, so a racing process cannot steal it (item 4)", async () => {
    const root = tempDir();
    // The first process stalls after writing its owner record and before the lock appears under its name...
    const slow = holdLockInChild(root, { LDS_FAILPOINT: "lock-before-link" });
    for (const until = Date.now() + 20_000; !fs.readdirSync(root).some((n) => n.startsWith("server.lock.new-"));) {
      if (Date.now() > until) throw new Error("the first process never reached the lock");
      await new Promise((r) => setTimeout(r, 5));
    }
    // ...meanwhile there is no lock file at all (never an empty one), so the second takes the lock whole.
    expect(fs.readdirSync(root).filter((n) => n === "server.lock")).toEqual([]);
    const fast = await holdLockInChild(root);
    try {
      // The slow one then finds a live holder and gives up instead of taking the lock as stale.
      const outcome = await slow.then(
        () => "locked",
        (err: Error) => err.message,
      );
      expect(outcome).toMatch(/child exited before locking/);
      expect(JSON.parse(fs.readFileSync(path.join(root, "server.lock"), "utf8")).pid).toBe(fast.child.pid);
      expect(fs.readdirSync(root).filter((n) => n.includes(".new-"))).toEqual([]);
    } finally {
      fast.child.kill("SIGKILL");
      await fast.child;
    }
  });

  it("recover an empty or garbled lock file (left by a release before 0.4)", () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, "backup.lock"), "");
    const lock = lockBackup(dataVolume(root));
    expect(() => lockBackup(dataVolume(root))).toThrow(/already running/);
    lock.release();
  });
});

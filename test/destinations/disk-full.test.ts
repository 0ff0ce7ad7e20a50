import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { addBallast, seedVolume } from "../helpers/volume.js";

/** A tiny real filesystem to fill up. Needs root; in CI (root) a failure to mount fails the test instead. */
function mountTmpfs(megabytes: number): string | null {
  const dir = tempDir("lds-tmpfs-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m`, "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    if (process.env.CI) throw new Error("CI runs as root and must be able to mount a tmpfs for the disk-full test");
    return null;
  }
}

const isRoot = process.getuid?.() === 0;

describe("a destination that fills up", () => {
  it.skipIf(!isRoot && !process.env.CI)("fails with disk_full, names the path, and leaves no partial archive (needs root for a tmpfs)", async () => {
    const mount = mountTmpfs(8);
    expect(mount).not.toBeNull();
    try {
      const dataDir = tempDir();
      await seedVolume(dataDir);
      addBallast(dataDir, 20);
      const result = await runCli("backup", ["--data-dir", dataDir, "--to", mount!]);
      expect(result.exitCode).toBe(8);
      expect(result.stderr).toMatch(new RegExp(`^Error: No space left while writing the archive ${mount}/lds-backup-\\d{8}T\\d{6}Z\\.tar\\.`, "m"));
      expect(result.stderr).toMatch(/^Hint: Free space on that filesystem or choose another destination/m);
      expect(fs.readdirSync(mount!)).toEqual([]);
      expect(fs.readdirSync(dataDir).filter((n) => n.startsWith("backup-") || n === "backup.lock")).toEqual([]);
    } finally {
      execFileSync("umount", [mount!]);
    }
  });

  it("refuses --keep 0 before taking any snapshot", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const out = tempDir();
    const result = await runCli("backup", ["--data-dir", dataDir, "--to", out, "--keep", "0"]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/--keep must be a whole number of at least 1/);
    expect(fs.readdirSync(out)).toEqual([]);
  });
});

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

describe("a data volume that fills up (issue 11, item 12)", () => {
  it.skipIf(!isRoot && !process.env.CI)("a restore that would leave no room for the databases' journals is refused with disk_full before anything is written", async () => {
    const source = tempDir();
    await seedVolume(source);
    addBallast(source, 20);
    const out = tempDir();
    const made = await runCli("backup", ["--data-dir", source, "--to", out, "--json"]);
    const archive = path.join(out, JSON.parse(made.stdout).name);
    // Room for the archive's files (about 21 MiB), not for them and SQLite's journals.
    const mount = mountTmpfs(24);
    try {
      await seedVolume(mount!, { libraries: [{ id: "/old/library" }] });
      const result = await runCli("restore", [archive, "--data-dir", mount!, "--yes"]);
      expect(result.exitCode, result.stderr).toBe(8);
      expect(result.stderr).toMatch(/^Error: Restoring the archive needs [\d.]+ MiB \(its files and room for the databases' journals\), but the data volume has [\d.]+ MiB free\./m);
      expect(fs.readdirSync(mount!).filter((n) => n.startsWith("restore-") || n.startsWith("pre-restore-"))).toEqual([]);
    } finally {
      execFileSync("umount", [mount!]);
    }
  });

  it.skipIf(!isRoot && !process.env.CI)("an ingestion that fills the disk fails the library with disk_full, not repository_unreachable", async () => {
    const { startGitServer } = await import("../helpers/git-server.js");
    const git = await startGitServer("unused-token");
    const mount = mountTmpfs(4);
    try {
      // 6 MiB of documentation that does not compress: the checkout cannot fit on the 4 MiB volume.
      const random = (n: number) => Array.from({ length: n }, () => Math.random().toString(36).slice(2)).join(" ");
      const repo = await git.createRepo("public", "acme", "heavy", { "README.md": "# Heavy\n\n" + random(300_000) });
      const result = await runCli("lds", ["ingest", "git", repo.url, "--data-dir", mount!], { LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host });
      expect(result.exitCode, result.stderr).toBe(8);
      expect(result.stderr).toMatch(/^Error: No space left on the data volume while fetching /m);
      const listed = await runCli("lds", ["libraries", "list", "--json", "--data-dir", mount!]);
      expect(JSON.parse(listed.stdout).libraries[0].reason).toMatch(/^disk_full: /);
    } finally {
      execFileSync("umount", [mount!]);
      await git.close();
    }
  });
});

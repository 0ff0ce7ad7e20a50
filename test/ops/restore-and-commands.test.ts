import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { makeArchive } from "../helpers/archives.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { fingerprintTree, libraryIds, seedVolume } from "../helpers/volume.js";

/** The teams of a volume's (or a pre-restore folder's) lds.db. */
function teamNames(dir: string): string[] {
  const db = new Database(path.join(dir, "lds.db"), { readonly: true });
  try {
    return db.prepare("SELECT name FROM teams ORDER BY name").pluck().all() as string[];
  } finally {
    db.close();
  }
}

describe("commands and an interrupted restore (issue 11, item 3)", () => {
  it("after a kill at every step of lds-restore, an admin command finishes or leaves the restore, and the old data is intact", async () => {
    const { archive } = await makeArchive();
    let step = 1;
    for (; step < 60; step++) {
      const dataDir = tempDir("lds-steps-");
      await seedVolume(dataDir, { libraries: [{ id: "/old/library" }], secret: "old-token" });
      const oldDb = fingerprintTree(dataDir)["lds.db"];
      const oldKey = fs.readFileSync(path.join(dataDir, "secret.key"));
      const crashed = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"], { LDS_FAILPOINT: `@${step}` });
      if (crashed.exitCode === 0) break; // every step was walked: the restore now runs to its end
      expect(crashed.exitCode, `step ${step}: ${crashed.stderr}`).not.toBe(1);

      // An admin command run before any recovery: it must never create a fresh lds.db or secret.key.
      const listed = await runCli("lds", ["teams", "list", "--data-dir", dataDir]);
      expect(listed.exitCode, `step ${step}: ${listed.stderr}`).toBe(0);
      const preRestore = fs.readdirSync(dataDir).filter((n) => n.startsWith("pre-restore-"));
      if (preRestore.length === 0) {
        // Killed before the point of no return: the volume is as it was.
        expect(libraryIds(dataDir), `step ${step}`).toEqual(["/old/library"]);
        expect(fingerprintTree(dataDir)["lds.db"], `step ${step}`).toBe(oldDb);
      } else {
        // Killed after it: the command finished the restore first and said so; the old data is kept whole.
        expect(listed.stderr, `step ${step}`).toMatch(/^lds: Finished an interrupted restore from .*; the previous data is in .*pre-restore-/m);
        expect(libraryIds(dataDir), `step ${step}`).toEqual(["/acme/gadgets", "/acme/widgets"]);
        const kept = path.join(dataDir, preRestore[0]!);
        expect(preRestore, `step ${step}`).toHaveLength(1);
        expect(fingerprintTree(kept)["lds.db"], `step ${step}`).toBe(oldDb);
        expect(fs.readFileSync(path.join(kept, "secret.key")).equals(oldKey), `step ${step}`).toBe(true);
        expect(
          fs.readdirSync(kept).filter((n) => n.includes("after-interruption")),
          `step ${step}`,
        ).toEqual([]);
      }
      expect(fs.existsSync(path.join(dataDir, "restore-journal.json")), `step ${step}`).toBe(false);
    }
    // The restore passes more than ten crash points (journal, each file moved out and in): all were walked.
    expect(step).toBeGreaterThan(10);
  }, 300_000);

  it("a command during a running restore is refused and changes nothing", async () => {
    const { archive } = await makeArchive();
    const dataDir = tempDir("lds-target-");
    await seedVolume(dataDir, { libraries: [{ id: "/old/library" }] });
    // The restore holds the volume for 10 s once the archive is verified, just before it swaps files.
    const restoring = spawnCli("restore", [archive, "--data-dir", dataDir, "--yes"], { LDS_FAILPOINT: "restore-hold-before-swap" });
    const verified = () => fs.readdirSync(dataDir).some((n) => n.startsWith("restore-work-") && fs.existsSync(path.join(dataDir, n, "key", "secret.key")));
    for (const until = Date.now() + 30_000; !verified();) {
      if (Date.now() > until) throw new Error("the restore did not reach its swap");
      await new Promise((r) => setTimeout(r, 5));
    }
    const created = await runCli("lds", ["teams", "create", "lost-team", "--data-dir", dataDir]);
    expect(created.exitCode).toBe(5);
    expect(created.stderr).toMatch(/^Error: The data volume .* is being restored \(pid \d+\); nothing was done\./m);
    const result = await restoring;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(libraryIds(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
    expect(teamNames(dataDir)).not.toContain("lost-team");
  }, 120_000);

  it("a restore refuses to start while a command has the volume open", async () => {
    const { archive } = await makeArchive();
    const dataDir = tempDir("lds-target-");
    await seedVolume(dataDir, { libraries: [{ id: "/old/library" }] });
    // A command that stays in the volume: an ingestion of a repository that never answers would do; a registered
    // user record of a live process is the same thing to a restore.
    fs.mkdirSync(path.join(dataDir, "volume-users"), { recursive: true });
    const holder = { pid: process.pid, hostname: (await import("node:os")).hostname(), processStart: null, purpose: "ingest git", since: new Date().toISOString() };
    fs.writeFileSync(path.join(dataDir, "volume-users", `${process.pid}-test.json`), JSON.stringify(holder));
    const refused = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toMatch(new RegExp(`^Error: The data volume .* is open by lds ingest git \\(pid ${process.pid}\\); nothing was changed\\.`, "m"));
    expect(libraryIds(dataDir)).toEqual(["/old/library"]);
    expect(fs.existsSync(path.join(dataDir, "server.lock"))).toBe(false);
  });
});

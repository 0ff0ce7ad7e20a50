import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { execa } from "execa";
import Database from "better-sqlite3";
import { LATEST_SCHEMA_VERSION } from "../../src/engine/sqlite/migrations.js";
import { describe, expect, it } from "vitest";
import { openVolume } from "../../src/volume/open-volume.js";
import { getSecret } from "../../src/store/sqlite/secrets-table.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { vectorsOf, seedVolume } from "../helpers/volume.js";
import { dbOf } from "../helpers/sqlite-db.js";

describe("lds backup", () => {
  it("writes one archive that GNU tar lists, sqlite3 opens, verify passes and restore brings back", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir, { secret: "ghp_secret-token-123" });
    const out = tempDir();
    const result = await runCli("backup", ["--data-dir", dataDir, "--to", out, "--json"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ libraries: 2, partial: [], schemaVersion: LATEST_SCHEMA_VERSION });
    expect(report.name).toMatch(/^lds-backup-\d{8}T\d{6}Z\.tar$/);
    expect(typeof report.durationMs).toBe("number");
    const archive = path.join(out, report.name);
    expect(report.path).toBe(archive);
    expect(fs.readdirSync(out)).toEqual([report.name]);
    expect(fs.statSync(archive).mode & 0o777).toBe(0o600);
    expect(report.size).toBe(fs.statSync(archive).size);
    expect(report.sha256).toBe(createHash("sha256").update(fs.readFileSync(archive)).digest("hex"));
    // Secrets never reach the manifest or the report.
    expect(result.stdout).not.toContain("ghp_secret");
    const { stdout: listing } = await execa("tar", ["-tf", archive]);
    expect(listing.split("\n")).toEqual(["manifest.json", "db/lds.db", "vectors/vectors.db", "key/secret.key"]);
    // Every file in the archive is private to its owner, like the key (item 14).
    const { stdout: modes } = await execa("tar", ["-tvf", archive]);
    expect(modes.split("\n").map((line) => line.slice(0, 10))).toEqual(["-rw-------", "-rw-------", "-rw-------", "-rw-------"]);
    expect(fs.readFileSync(archive).includes(Buffer.from("ghp_secret-token-123"))).toBe(false);

    const unpacked = tempDir();
    await execa("tar", ["-xf", archive, "-C", unpacked]);
    const { stdout: check } = await execa("sqlite3", [path.join(unpacked, "db/lds.db"), "PRAGMA integrity_check; SELECT count(*) FROM libraries;"]);
    expect(check.split("\n")).toEqual(["ok", "2"]);
    expect(JSON.parse(fs.readFileSync(path.join(unpacked, "manifest.json"), "utf8")).libraries.map((l: { id: string }) => l.id)).toEqual(["/acme/gadgets", "/acme/widgets"]);

    const verified = await runCli("lds", ["verify", archive, "--json"]);
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, schemaVersion: LATEST_SCHEMA_VERSION, compatibility: { restorable: true } });

    const target = tempDir();
    const restored = await runCli("restore", [archive, "--data-dir", target, "--yes"]);
    expect(restored.exitCode, restored.stderr).toBe(0);
    const volume = await openVolume(target);
    expect(getSecret(dbOf(volume), volume.key, "team:1:git-token")).toBe("ghp_secret-token-123");
    expect(dbOf(volume).prepare("SELECT count(*) FROM snippets").pluck().get()).toBe(6);
    expect(vectorsOf(volume).count()).toBe(6);
    expect(dbOf(volume).pragma("journal_mode", { simple: true })).toBe("wal");
    volume.close();
  });

  it("compresses with --gzip into a .tar.gz that verifies", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const out = tempDir();
    const result = await runCli("backup", ["--data-dir", dataDir, "--to", out, "--gzip", "--json"]);
    const { name } = JSON.parse(result.stdout);
    expect(name).toMatch(/\.tar\.gz$/);
    expect((await execa("tar", ["-tzf", path.join(out, name)])).stdout).toContain("manifest.json");
    expect((await runCli("lds", ["verify", path.join(out, name)])).exitCode).toBe(0);
  });

  it("gives distinct names to back-to-back backups and defaults to <data-dir>/backups", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const first = await runCli("backup", ["--data-dir", dataDir, "--json"]);
    const second = await runCli("backup", ["--data-dir", dataDir, "--json"]);
    expect(first.exitCode).toBe(0);
    expect(second.exitCode).toBe(0);
    const names = fs.readdirSync(path.join(dataDir, "backups")).sort();
    expect(names).toHaveLength(2);
    expect(names).toEqual([JSON.parse(first.stdout).name, JSON.parse(second.stdout).name]);
  });

  it("refuses a directory that is not a data volume, and a second backup at the same time", async () => {
    const empty = await runCli("backup", ["--data-dir", tempDir(), "--to", tempDir()]);
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toMatch(/holds no LDS database/);

    const dataDir = tempDir();
    await seedVolume(dataDir);
    fs.writeFileSync(path.join(dataDir, "backup.lock"), JSON.stringify({ pid: process.pid, hostname: (await import("node:os")).hostname(), processStart: null, purpose: "backup", since: "now" }));
    const busy = await runCli("backup", ["--data-dir", dataDir, "--to", tempDir()]);
    expect(busy.exitCode).toBe(5);
    expect(busy.stderr).toMatch(/already running/);
  });

  it("refuses a destination on a virtual filesystem or a file at once, without hanging (item 5)", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    for (const [to, why] of [
      ["/proc/lds-backups", "under /proc, a virtual filesystem"],
      ["/sys/x", "under /sys"],
      [path.join(dataDir, "lds.db"), "exists and is not a directory"],
    ]) {
      const refused = await runCli("backup", ["--data-dir", dataDir, "--to", to!]);
      expect(refused.exitCode, to).toBe(2);
      expect(refused.stderr).toContain(why);
    }
  });

  it("never writes an archive whose key does not belong to its database (issue 11, item 6)", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir, { secret: "a sealed token" });
    // The key of another volume put in place (as a backup taken half-way through a swap of files would see it).
    const other = tempDir();
    await seedVolume(other);
    fs.copyFileSync(path.join(other, "secret.key"), path.join(dataDir, "secret.key"));
    const out = tempDir();
    const refused = await runCli("backup", ["--data-dir", dataDir, "--to", out]);
    expect(refused.exitCode).toBe(9);
    expect(refused.stderr).toMatch(/^Error: .*secret\.key is not the key .*lds\.db was sealed with \(its fingerprint is not the one the database records\); no archive was written\./m);
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it("takes a consistent snapshot while another process writes continuously", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    // Each transaction adds a library and its snippet: a snapshot holds both or neither, numbered without gaps.
    // Then vectors.db records the same number (as an ingestion writes a snippet's vector after it): the two files
    // are copied side by side, and vectors.db's state must be the earlier one, so it never records a number that
    // lds.db's snapshot lacks.
    const writer = execa(
      "node",
      [
        "--input-type=module",
        "-e",
        `
      import Database from "better-sqlite3";
      const db = new Database(${JSON.stringify(path.join(dataDir, "lds.db"))});
      const vectors = new Database(${JSON.stringify(path.join(dataDir, "vectors.db"))});
      for (const d of [db, vectors]) { d.pragma("journal_mode = WAL"); d.pragma("busy_timeout = 5000"); }
      const lib = db.prepare("INSERT INTO libraries (id, title, source, state) VALUES (?, 'load', 'git', 'finalized')");
      const snip = db.prepare("INSERT INTO snippets (library_id, kind, title, content) VALUES (?, 'info', 't', ?)");
      const mark = vectors.prepare("INSERT INTO vector_partitions (partition, generation) VALUES (?, ?)");
      const write = db.transaction((n) => { lib.run('/load/' + n); snip.run('/load/' + n, 'x'.repeat(2000)); });
      let n = 0;
      const until = Date.now() + 20000;
      while (Date.now() < until) { write(++n); mark.run('/load/' + n, n); if (n % 500 === 0) console.log(n); }
    `,
      ],
      { cwd: process.cwd(), reject: false },
    );
    await new Promise<void>((resolve) => writer.stdout!.once("data", () => resolve()));
    const out = tempDir();
    const result = await runCli("backup", ["--data-dir", dataDir, "--to", out, "--json"]);
    const written = Number(
      String(await new Promise<Buffer>((r) => writer.stdout!.once("data", r)))
        .trim()
        .split("\n")
        .pop(),
    );
    writer.kill("SIGKILL");
    await writer;
    expect(result.exitCode, result.stderr).toBe(0);
    const archive = path.join(out, JSON.parse(result.stdout).name);
    expect((await runCli("lds", ["verify", archive])).exitCode).toBe(0);

    const unpacked = tempDir();
    await execa("tar", ["-xf", archive, "-C", unpacked]);
    const snap = new Database(path.join(unpacked, "db/lds.db"), { readonly: true });
    const ids = snap.prepare("SELECT CAST(substr(id, 7) AS INTEGER) FROM libraries WHERE id LIKE '/load/%' ORDER BY 1").pluck().all() as number[];
    const orphans = snap.prepare("SELECT count(*) FROM libraries l WHERE id LIKE '/load/%' AND (SELECT count(*) FROM snippets s WHERE s.library_id = l.id) != 1").pluck().get();
    snap.close();
    const vectorsSnap = new Database(path.join(unpacked, "vectors/vectors.db"), { readonly: true });
    const marked = vectorsSnap.prepare("SELECT coalesce(max(generation), 0) FROM vector_partitions WHERE partition LIKE '/load/%'").pluck().get() as number;
    vectorsSnap.close();
    expect(marked).toBeGreaterThan(0);
    expect(marked).toBeLessThanOrEqual(ids.length);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
    expect(orphans).toBe(0);
    // The writer kept going while the backup ran: the snapshot is a state in the middle, not after it stopped.
    expect(written).toBeGreaterThan(ids.length);
  });
});

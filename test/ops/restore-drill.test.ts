import path from "node:path";
import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { seedVolume } from "../helpers/volume.js";
import { alteredCopy } from "../helpers/altered-archive.js";

/** A backup of a seeded volume, and a copy of it whose database is changed by `alter` with valid checksums. */
async function archives(alter: (db: Database.Database) => void, file?: "db/lds.db" | "vectors/vectors.db") {
  const dataDir = tempDir("lds-drill-vol-");
  await seedVolume(dataDir, { secret: "ghp_drill-token" });
  const out = tempDir("lds-drill-out-");
  const made = await runCli("backup", ["--data-dir", dataDir, "--to", out, "--json"]);
  expect(made.exitCode, made.stderr).toBe(0);
  const good = path.join(out, JSON.parse(made.stdout).name);

  // Altered "consistently": the database changed, then every checksum in the manifest made to match it again.
  const altered = path.join(out, "altered.tar");
  const { manifest } = alteredCopy(good, altered, alter, file);
  return { good, altered, manifest };
}

describe("restore drills: lds verify --restore-test (issue 15)", () => {
  it("pass on a good archive, checking what the manifest recorded at backup time, canary queries included", async () => {
    const { good, manifest } = await archives(() => {});
    expect(manifest.formatVersion).toBe(2);
    expect(manifest.canaries.length).toBeGreaterThan(0);
    const r = await runCli("lds", ["verify", good, "--restore-test", "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ ok: true, restoreTest: true });
    expect(result.checks.map((c: { part: string }) => c.part)).toEqual(["restore", "open", "full-text index", "snippets per library", "vector index", "sealed secrets", "canary queries"]);
    expect(result.checks.find((c: { part: string }) => c.part === "canary queries").detail).toBe(`${manifest.canaries.length} answer as at backup time`);
    expect(result.checks.find((c: { part: string }) => c.part === "sealed secrets").detail).toBe("1 unseal with the archive's key");
  });

  it("fail, naming what differs, on an archive whose snippets were changed with valid checksums", async () => {
    const removed = await archives((db) => db.prepare("DELETE FROM snippets WHERE id = (SELECT max(id) FROM snippets WHERE library_id = '/acme/widgets')").run());
    // The checksums and the databases' integrity hold: only the drill can tell.
    expect((await runCli("lds", ["verify", removed.altered])).exitCode).toBe(0);
    const drilled = await runCli("lds", ["verify", removed.altered, "--restore-test"]);
    expect(drilled.exitCode).toBe(3);
    expect(drilled.stderr).toContain("the restore drill found that /acme/widgets holds 2 snippets, the manifest recorded 3 at backup time");

    let changedId = 0;
    const reworded = await archives((db) => {
      // The best answer of the first canary loses its words: counts stay equal, the answers change.
      changedId = db.prepare("SELECT min(id) FROM snippets WHERE library_id = '/acme/gadgets'").pluck().get() as number;
      db.prepare("UPDATE snippets SET title = 'Unrelated', content = 'Nothing that anyone asked about.' WHERE id = ?").run(changedId);
    });
    expect(reworded.manifest.canaries.some((c: { top: number[] }) => c.top.includes(changedId))).toBe(true);
    expect((await runCli("lds", ["verify", reworded.altered])).exitCode).toBe(0);
    const second = await runCli("lds", ["verify", reworded.altered, "--restore-test"]);
    expect(second.exitCode).toBe(3);
    expect(second.stderr).toMatch(/the restore drill found that the canary query "[^"]+" of \/acme\/gadgets answers snippets .*, at backup time /);
  });

  it("fail when a served snippet has no vector, and leave the rows of unpublished snippet batches alone", async () => {
    let lacking = 0;
    const noVector = await archives((vectors) => {
      lacking = vectors.prepare("SELECT max(snippet_id) FROM vec_snippets").pluck().get() as number;
      vectors.prepare("DELETE FROM vec_snippets WHERE snippet_id = ?").run(BigInt(lacking));
    }, "vectors/vectors.db");
    expect((await runCli("lds", ["verify", noVector.altered])).exitCode).toBe(0);
    const drilled = await runCli("lds", ["verify", noVector.altered, "--restore-test"]);
    expect(drilled.exitCode).toBe(3);
    expect(drilled.stderr).toContain(`the restore drill found that snippet ${lacking} has no vector in the vector index`);

    // A batch being written when the snapshot was taken (schema 11): rows without vectors, which nobody is served.
    const staged = await archives((db) => {
      db.prepare("INSERT INTO snippet_batches (library_id, version, batch, state) VALUES ('/acme/widgets', '', 7, 'writing')").run();
      db.prepare("INSERT INTO snippets (library_id, version, batch, kind, title, content) VALUES ('/acme/widgets', '', 7, 'info', 'Half written', 'A new batch.')").run();
    });
    const passed = await runCli("lds", ["verify", staged.altered, "--restore-test", "--json"]);
    expect(passed.exitCode, passed.stderr).toBe(0);
    expect(JSON.parse(passed.stdout).checks.find((c: { part: string }) => c.part === "vector index").detail).toBe("each of the 6 served snippets has its vector (6 vectors in all)");
  });
});

import fs from "node:fs";
import path from "node:path";
import { execa } from "execa";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION } from "../../src/engine/sqlite/migrations.js";
import { FORMAT_VERSION } from "../../src/archive/manifest.js";
import { loadVectorExtension } from "../../src/index/sqlite/vector-index.js";
import { makeArchive, refreshChecksums, repack } from "../helpers/archives.js";
import { BIN, ROOT, runCli, spawnCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { fingerprintTree, libraryIds, seedVolume } from "../helpers/volume.js";

/** A volume holding /old/library, and an archive of another volume holding /acme/widgets and /acme/gadgets. */
async function scenario() {
  const { archive } = await makeArchive();
  const dataDir = tempDir("lds-target-");
  await seedVolume(dataDir, { libraries: [{ id: "/old/library" }] });
  return { archive, dataDir };
}

describe("lds-restore", () => {
  it("rule 1: refuses while a server holds the volume, and says how to stop it", async () => {
    const { archive, dataDir } = await scenario();
    const server = spawnCli("lds", ["serve", "--data-dir", dataDir, "--port", "0"]);
    await new Promise<void>((resolve) => server.stdout!.on("data", (d: Buffer) => d.toString().includes("LDS is serving") && resolve()));
    try {
      const before = fingerprintTree(dataDir);
      const result = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
      expect(result.exitCode).toBe(5);
      expect(result.stderr).toMatch(/in use by an LDS server/);
      expect(result.stderr).toMatch(/^Hint: Stop that server first \(systemctl stop lds, or kill -TERM \d+\)/m);
      delete before["server.lock"];
      const after = fingerprintTree(dataDir);
      delete after["server.lock"];
      for (const name of ["lds.db", "vectors.db", "secret.key"]) expect(after[name]).toBe(before[name]);
    } finally {
      server.kill("SIGTERM");
      await server;
    }
  });

  it("rules 2 and 5: verifies first, then moves every current file (WAL side files too) into pre-restore-<time>/", async () => {
    const { archive, dataDir } = await scenario();
    // A server killed with SIGKILL leaves committed data in lds.db-wal: it must be kept with lds.db.
    await execa(
      "node",
      [
        "--input-type=module",
        "-e",
        `
      import Database from "better-sqlite3";
      const db = new Database(${JSON.stringify(path.join(dataDir, "lds.db"))});
      db.pragma("wal_autocheckpoint = 0");
      db.prepare("INSERT INTO libraries (id, title, source) VALUES ('/only/in/wal', 'w', 'git')").run();
      process.kill(process.pid, "SIGKILL");`,
      ],
      { cwd: ROOT, reject: false },
    );
    expect(fs.existsSync(path.join(dataDir, "lds.db-wal"))).toBe(true);
    const before = fingerprintTree(dataDir);

    const result = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [preRestore] = fs.readdirSync(dataDir).filter((n) => n.startsWith("pre-restore-"));
    expect(preRestore).toMatch(/^pre-restore-\d{8}T\d{6}Z$/);
    expect(result.stdout).toContain(`moved to ${path.join(dataDir, preRestore!)}`);
    const kept = fingerprintTree(path.join(dataDir, preRestore!));
    for (const name of ["lds.db", "lds.db-wal", "lds.db-shm", "vectors.db", "secret.key"]) expect(kept[name]).toBe(before[name]);
    // The old data is intact in the kept copy, WAL included.
    expect(libraryIds(path.join(dataDir, preRestore!))).toEqual(["/old/library", "/only/in/wal"]);
    expect(libraryIds(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
    expect(fs.readdirSync(dataDir).filter((n) => n.startsWith("restore-") || n.endsWith(".json"))).toEqual([]);
  });

  it.each([
    ["app version", (m: Record<string, any>) => (m.appVersion = "99.0.0"), /made by LDS 99.0.0/],
    ["format version", (m: Record<string, any>) => (m.formatVersion = FORMAT_VERSION + 1), new RegExp(`format version ${FORMAT_VERSION + 1}`)],
    ["schema version", (m: Record<string, any>) => (m.schemaVersion = LATEST_SCHEMA_VERSION + 1), /schema version/],
  ])("rule 3: refuses an archive with a newer %s and says to upgrade first", async (_label, change, message) => {
    const { archive, dataDir } = await scenario();
    const newer = await repack(archive, (m, entries) => {
      change(m);
      refreshChecksums(m, entries);
    });
    const before = fingerprintTree(dataDir);
    const result = await runCli("restore", [newer, "--data-dir", dataDir, "--yes"]);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/[Uu]pgrade/);
    expect(fingerprintTree(dataDir)).toEqual(before);
  });

  it("rule 4: with no terminal and no --yes, refuses instead of waiting", async () => {
    const { archive, dataDir } = await scenario();
    const before = fingerprintTree(dataDir);
    const result = await runCli("restore", [archive, "--data-dir", dataDir]);
    expect(result.exitCode).toBe(7);
    expect(result.stderr).toMatch(/^Error: Restore needs confirmation, and there is no terminal to ask on.\nHint: .*--yes/);
    expect(fingerprintTree(dataDir)).toEqual(before);
  });

  it.each([
    ["n", 7, ["/old/library"]],
    ["y", 0, ["/acme/gadgets", "/acme/widgets"]],
  ])("rule 4: on a terminal, shows the summary and asks; answering %s", async (answer, exitCode, libraries) => {
    const { archive, dataDir } = await scenario();
    // util-linux `script` gives the restore a real pseudo-terminal; the answer is typed once the prompt shows.
    const child = execa("script", ["-qec", `node ${BIN.restore} ${archive} --data-dir ${dataDir}`, "/dev/null"], { reject: false });
    let screen = "";
    child.stdout!.on("data", (d: Buffer) => {
      screen += d.toString();
      if (screen.includes("Replace the data") && !screen.includes("\u0000typed")) {
        screen += "\u0000typed";
        child.stdin!.write(`${answer}\r`);
      }
    });
    const result = await child;
    expect(screen).toContain("Created:");
    expect(screen).toContain("/acme/widgets");
    expect(result.exitCode).toBe(exitCode);
    expect(libraryIds(dataDir)).toEqual(libraries);
  });

  it("rule 7: queues the libraries that were being indexed at snapshot time", async () => {
    const { archive } = await makeArchive({
      libraries: [{ id: "/done/lib" }, { id: "/busy/lib", state: "embedding" }, { id: "/job/lib", state: "queued" }],
      runningJobFor: "/job/lib",
    });
    const inspect = await runCli("lds", ["inspect", archive, "--json"]);
    expect(JSON.parse(inspect.stdout).partial).toEqual(["/busy/lib", "/job/lib"]);
    const dataDir = tempDir();
    const result = await runCli("restore", [archive, "--data-dir", dataDir, "--yes"]);
    expect(result.stdout).toContain("Queued for re-indexing (partial at backup time): /busy/lib, /job/lib");
    const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
    expect(db.prepare("SELECT id, state FROM libraries ORDER BY id").all()).toEqual([
      { id: "/busy/lib", state: "queued" },
      { id: "/done/lib", state: "finalized" },
      { id: "/job/lib", state: "queued" },
    ]);
    expect(db.prepare("SELECT library_id, state FROM jobs ORDER BY library_id").all()).toEqual([
      { library_id: "/busy/lib", state: "queued" },
      { library_id: "/job/lib", state: "queued" },
    ]);
    db.close();
  });

  it("restores the archive of an older release, and the next start migrates it", async () => {
    const dataDir = tempDir();
    const fixture = path.join(ROOT, "fixtures/archives/lds-0.1.0-schema2.tar");
    const result = await runCli("restore", [fixture, "--data-dir", dataDir, "--yes"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("migrated at the next `lds serve`");
    expect(result.stdout).toContain("/acme/gadgets");
    // An administrative command on the restored volume leaves its old vector index as it is (only a rebuild changes it).
    expect((await runCli("lds", ["teams", "list", "--data-dir", dataDir])).exitCode).toBe(0);
    const before = new Database(path.join(dataDir, "vectors.db"), { readonly: true });
    loadVectorExtension(before);
    expect(before.prepare("SELECT value FROM vector_meta WHERE key = 'layout'").pluck().get()).toBeUndefined();
    expect(before.prepare("SELECT count(*) FROM vec_snippets").pluck().get()).toBe(3);
    before.close();

    const server = spawnCli("lds", ["serve", "--data-dir", dataDir, "--port", "0"]);
    const url = await new Promise<string>((resolve) => {
      let out = "";
      server.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /"url":"([^"]+)"/.exec(out);
        if (m) resolve(m[1]!);
      });
    });
    const health = (await (await fetch(`${url}/api/health`)).json()) as { schemaVersion: number };
    // /acme/gadgets was being indexed at backup time; 0.1 recorded no URL, so its re-index job fails with what to
    // do, instead of leaving the library queued for ever (issue 11, item 13). It keeps its snippet.
    const gadgets = () => {
      const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
      try {
        return db.prepare("SELECT state, state_reason FROM libraries WHERE id = '/acme/gadgets'").get() as { state: string; state_reason: string | null };
      } finally {
        db.close();
      }
    };
    for (const until = Date.now() + 30_000; gadgets().state === "queued";) {
      if (Date.now() > until) throw new Error("/acme/gadgets stayed queued");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(gadgets()).toEqual({ state: "failed", state_reason: expect.stringMatching(/^repository_url_invalid: \/acme\/gadgets records no repository URL \(it was indexed by LDS 0\.1\)/) });
    server.kill("SIGTERM");
    const log = String((await server).stdout);
    expect(health.schemaVersion).toBe(LATEST_SCHEMA_VERSION);
    const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
    expect(db.prepare("SELECT count(*) FROM snippets_fts WHERE snippets_fts MATCH 'basics'").pluck().get()).toBe(1);
    const snippets = db.prepare("SELECT count(*) FROM snippets").pluck().get();
    db.close();
    // 0.1.0's vector index (no partitions, MD5 embedder) was rebuilt from the snippets at the start.
    expect(log).toContain("vector index rebuilt");
    const vectors = new Database(path.join(dataDir, "vectors.db"), { readonly: true });
    loadVectorExtension(vectors);
    const meta = Object.fromEntries((vectors.prepare("SELECT key, value FROM vector_meta").all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]));
    expect(meta).toMatchObject({ layout: "2", complete: "1", embedder: "hashing-v2-384" });
    expect(vectors.prepare("SELECT count(*) FROM vec_snippets").pluck().get()).toBe(snippets);
    vectors.close();
    // …and the restored libraries answer searches.
    const found = await runCli("lds", ["search", "widgets", "--data-dir", dataDir]);
    expect(found.stdout).toContain("/acme/widgets  finalized");
    const context = await runCli("lds", ["context", "/acme/widgets", "create a widget", "--data-dir", dataDir]);
    expect(context.exitCode, context.stderr).toBe(0);
    expect(context.stdout).toContain("### Create a widget");
    expect(context.stdout).toContain("new Widget({ size: 3 })");
    const listed = JSON.parse((await runCli("lds", ["libraries", "list", "--json", "--data-dir", dataDir])).stdout) as { libraries: Array<Record<string, unknown>> };
    expect(listed.libraries.map((l) => [l.id, l.totalSnippets, l.versions])).toEqual([
      ["/acme/gadgets", 1, []],
      ["/acme/widgets", 2, []],
    ]);
    expect(listed.libraries[1]).toMatchObject({ processing: "finalized", state: "finalized", reason: null });
  });
});

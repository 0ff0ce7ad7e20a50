import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEntries } from "../helpers/archives.js";
import { runCli } from "../helpers/cli.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { startPostgres, type PostgresTestServer } from "../helpers/postgres-server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";

// Issue 34, done-when 4: the documented migration path, through the commands an operator runs. A SQLite volume's
// archive restored into PostgreSQL, backed up there, and restored into a new SQLite volume keeps every library's
// snippet count and every canary's answer (snippet ids are kept all the way); an unreachable database fails at once.
let postgres: PostgresTestServer;
let git: GitServer;

beforeAll(async () => {
  postgres = await startPostgres();
  git = await startGitServer("ghp_unused-token-for-private-repos");
}, 60_000);
afterAll(async () => {
  await git?.close();
  await postgres?.stop();
});

const PAGES = {
  "README.md": "# Saltmarsh\n\nSaltmarsh reads sensor logs from estuaries.\n\n## Sampling\n\nEvery probe samples salinity once a minute and buffers an hour of readings.\n",
  "docs/calibration.md": "# Calibration\n\nA probe is calibrated against two reference solutions before each season.\n\n```js\nawait probe.calibrate({ low: 0.5, high: 35 });\n```\n",
  "docs/export.md": "# Export\n\nReadings export as CSV or Parquet, one file per probe and day.\n",
};

interface ArchiveView {
  path: string;
  libraries: Array<{ id: string; snippets: number }>;
  canaries: Array<{ libraryId: string; query: string; top: number[] }>;
}

async function backUp(env: Record<string, string>): Promise<ArchiveView> {
  const result = await runCli("lds", ["backup", "--to", tempDir("lds-cross-backups-"), "--json"], env);
  expect(result.exitCode, result.stderr).toBe(0);
  const archive = (JSON.parse(result.stdout) as { path: string }).path;
  const manifest = JSON.parse((await readEntries(archive)).find((e) => e.path === "manifest.json")!.body!.toString());
  return { path: archive, libraries: manifest.libraries, canaries: manifest.canaries };
}

const countsOf = (view: ArchiveView) => Object.fromEntries(view.libraries.map((l) => [l.id, l.snippets]));

/** A loopback port nothing listens on: taken, then let go. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("cross-restore SQLite → PostgreSQL → SQLite (issue 34, done-when 4)", () => {
  it("keeps every library's snippet count and every canary's answer, and the restored SQLite volume answers", async () => {
    // 1. A SQLite volume with two libraries ingested from real git repositories over HTTP.
    const sqliteDir = tempDir("lds-cross-sqlite-");
    const sqlite = { LDS_DATA_DIR: sqliteDir };
    expect((await runCli("lds", ["init", "--email", "ops@example.com"], sqlite)).exitCode).toBe(0);
    const host = new URL(git.base).host;
    for (const name of ["saltmarsh", "saltmarsh-tools"]) {
      const repo = await git.createRepo("public", "estuary", name, PAGES);
      const ingested = await runCli("lds", ["ingest", "git", repo.url, "--allow-http-host", host], sqlite);
      expect(ingested.exitCode, ingested.stderr).toBe(0);
    }
    const first = await backUp(sqlite);
    expect(first.libraries.length).toBe(2);
    expect(first.canaries.length).toBeGreaterThan(0);

    // 2. Into PostgreSQL, then backed up from there (the key file starts as another key: the restore replaces it).
    const database = await postgres.newDatabase();
    const keyFile = path.join(tempDirForFile(), "secret.key");
    fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const pg = { LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir("lds-cross-pg-") };
    const intoPg = await runCli("restore", [first.path, "--yes"], pg);
    expect(intoPg.exitCode, intoPg.stderr).toBe(0);
    const second = await backUp(pg);
    expect(countsOf(second)).toEqual(countsOf(first));
    expect(second.canaries).toEqual(first.canaries);
    const verified = await runCli("lds", ["verify", second.path, "--restore-test"], {});
    expect(verified.exitCode, verified.stderr + verified.stdout).toBe(0);

    // 3. Back into a new SQLite volume: the same counts and answers, and it serves them.
    const backDir = tempDir("lds-cross-back-");
    const back = { LDS_DATA_DIR: backDir };
    const intoSqlite = await runCli("restore", [second.path, "--yes"], back);
    expect(intoSqlite.exitCode, intoSqlite.stderr).toBe(0);
    const third = await backUp(back);
    expect(countsOf(third)).toEqual(countsOf(first));
    expect(third.canaries).toEqual(first.canaries);
    const context = await runCli("lds", ["context", first.libraries[0].id, "calibrated reference solutions"], back);
    expect(context.exitCode, context.stderr).toBe(0);
    expect(context.stdout).toContain("two reference solutions");
    await database.drop();
  }, 300_000);

  it("fails within 10 s with database_unreachable (exit 8) when the database does not answer, naming host and port, and changes nothing", async () => {
    const port = await closedPort();
    const keyFile = path.join(tempDirForFile(), "secret.key");
    const key = randomBytes(32);
    fs.writeFileSync(keyFile, key, { mode: 0o600 });
    const sqliteDir = tempDir("lds-cross-empty-");
    expect((await runCli("lds", ["init", "--email", "ops@example.com"], { LDS_DATA_DIR: sqliteDir })).exitCode).toBe(0);
    const archive = await backUp({ LDS_DATA_DIR: sqliteDir });
    const url = `postgres://lds:not-this-password@127.0.0.1:${port}/lds`;
    const started = Date.now();
    const result = await runCli("restore", [archive.path, "--database-url", url, "--yes"], { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() });
    expect(Date.now() - started).toBeLessThan(10_000 + 5_000); // the command's own start on a busy machine on top
    expect(result.exitCode, result.stderr).toBe(8);
    expect(result.stderr).toContain(`127.0.0.1:${port}`);
    expect(result.stderr).not.toContain("not-this-password");
    expect(fs.readFileSync(keyFile).equals(key)).toBe(true);
    expect(fs.readdirSync(path.dirname(keyFile))).toEqual(["secret.key"]);

    // A value that is no PostgreSQL URL is refused naming the option it came from, never repeating it.
    const garbled = await runCli("restore", [archive.path, "--database-url", "mysql://lds:s3cret@127.0.0.1/lds", "--yes"], { LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: tempDir() });
    expect(garbled.exitCode, garbled.stderr).toBe(2);
    expect(garbled.stderr).toMatch(/^Error: --database-url is not a PostgreSQL URL/m);
    expect(garbled.stderr).not.toContain("s3cret");
  }, 120_000);
});

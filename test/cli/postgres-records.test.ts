import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../helpers/postgres-server.js";
import { tempDir, tempDirForFile } from "../helpers/temp.js";

let server: PostgresTestServer;
let database: TestDatabase;
let keyFile: string;
let password: string;

beforeAll(async () => {
  server = await startPostgres();
  database = await server.newDatabase();
  password = new URL(database.url).password;
  keyFile = path.join(tempDirForFile(), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
});
afterAll(async () => server?.stop());

/** The environment of a replica: the shared database and key, and its own data directory. */
const replica = (dataDir: string, extra: Record<string, string> = {}) => ({ LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: keyFile, LDS_DATA_DIR: dataDir, ...extra });

/** A key file of 32 bytes with this mode. */
function otherKey(mode: number): string {
  const file = path.join(tempDir(), "secret.key");
  fs.writeFileSync(file, randomBytes(32), { mode });
  fs.chmodSync(file, mode);
  return file;
}

describe("the records commands on PostgreSQL (LDS_DATABASE_URL)", () => {
  it("lds init on one replica makes the team, owner and key that keys, teams, users, admin create, connections and audit on another read and change", async () => {
    const [first, second] = [tempDir(), tempDir()];
    const init = await runCli("lds", ["init", "--email", "ops@example.com", "--json"], replica(first));
    expect(init.exitCode, init.stderr).toBe(0);
    const made = JSON.parse(init.stdout) as { prefix: string; team: string };
    expect(made.team).toBe("default");

    const keys = await runCli("lds", ["keys", "list", "--json"], replica(second));
    expect(keys.exitCode, keys.stderr).toBe(0);
    expect((JSON.parse(keys.stdout) as Array<{ prefix: string; email: string }>).map((k) => [k.prefix, k.email])).toEqual([[made.prefix, "ops@example.com"]]);
    const teams = await runCli("lds", ["teams", "list"], replica(second));
    expect(teams.stdout).toBe("default\tenterprise");
    const added = await runCli("lds", ["users", "add", "dev@example.com", "--team", "default"], replica(second));
    expect(added.stdout, added.stderr).toBe("Added dev@example.com to default as member.");
    const created = await runCli("lds", ["keys", "create", "--email", "dev@example.com", "--json"], replica(first));
    expect(created.exitCode, created.stderr).toBe(0);
    const both = await runCli("lds", ["keys", "list", "--json"], replica(second));
    expect((JSON.parse(both.stdout) as Array<{ email: string }>).map((k) => k.email).sort()).toEqual(["dev@example.com", "ops@example.com"]);
    const again = await runCli("lds", ["init", "--email", "other@example.com"], replica(second));
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/^Error: This data volume already has teams/m);
    const libraries = await runCli("lds", ["libraries", "list"], replica(second));
    expect(libraries.stdout).toMatch(/^No libraries yet/);
    const admin = await runCli("lds", ["admin", "create", "--username", "ops"], replica(second, { LDS_ADMIN_PASSWORD: "a long enough password" }));
    expect(admin.stdout, admin.stderr).toBe("Created admin ops. Log in with POST /api/auth/login.");
    const twice = await runCli("lds", ["admin", "create", "--username", "OPS"], replica(first, { LDS_ADMIN_PASSWORD: "a long enough password" }));
    expect(twice.exitCode).toBe(2);
    const connections = await runCli("lds", ["connections", "list"], replica(first));
    expect(connections.stdout, connections.stderr).toMatch(/^No connections\./);
    const audit = await runCli("lds", ["audit", "--json"], replica(first));
    expect(audit.exitCode, audit.stderr).toBe(0);
    expect(audit.stdout).toContain("dev@example.com");

    // The records are in PostgreSQL: the replicas' own directories hold no database, and no key was made there.
    for (const dir of [first, second]) expect(fs.readdirSync(dir).filter((f) => /\.db|secret\.key/.test(f))).toEqual([]);
  });

  it("refuses a key that is not the one the database was sealed with (key_missing), naming the key file and never the key", async () => {
    const wrong = otherKey(0o600);
    const result = await runCli("lds", ["keys", "list"], replica(tempDir(), { LDS_SECRET_KEY_FILE: wrong }));
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toMatch(new RegExp(`^Error: ${wrong} is not the key the database at 127\\.0\\.0\\.1:${server.port} was sealed with\\.$`, "m"));
    expect(result.stderr).toMatch(/^Hint: Give this replica a copy of the key file the other replicas use \(LDS_SECRET_KEY_FILE\)/m);
    expect(result.stderr).not.toContain(fs.readFileSync(wrong).toString("hex"));
    expect(result.stderr).not.toContain(password);
  });

  it("refuses a missing key file (never created) and one readable by others", async () => {
    const dir = tempDir();
    const missing = path.join(dir, "no.key");
    const absent = await runCli("lds", ["teams", "list"], replica(dir, { LDS_SECRET_KEY_FILE: missing }));
    expect(absent.exitCode).toBe(9);
    expect(absent.stderr).toMatch(new RegExp(`^Error: The key file ${missing} does not exist; with a shared database the key is never created`, "m"));
    expect(absent.stderr).toContain("head -c 32 /dev/urandom");
    expect(fs.existsSync(missing)).toBe(false);

    const open = otherKey(0o644);
    const insecure = await runCli("lds", ["teams", "list"], replica(dir, { LDS_SECRET_KEY_FILE: open }));
    expect(insecure.exitCode).toBe(9);
    expect(insecure.stderr).toMatch(new RegExp(`^Error: ${open} is readable by group or others \\(mode 0644\\)\\.$`, "m"));
  });

  it("answers engine_unsupported (exit 12) for the commands that need more than the records, before taking or creating anything", async () => {
    const dir = path.join(tempDir(), "volume");
    const cases: Array<[string[], string]> = [
      [["search", "react"], "lds search"],
      [["context", "/example/repo", "hooks"], "lds context"],
      [["index", "rebuild"], "lds index rebuild"],
    ];
    for (const [args, command] of cases) {
      const result = await runCli("lds", args, replica(dir));
      expect(result.exitCode, `${command}: ${result.stderr}`).toBe(12);
      expect(result.stderr).toMatch(new RegExp(`^Error: \`${command}\` is not available on PostgreSQL yet: it needs `, "m"));
      expect(result.stderr).toMatch(/^Hint: /m);
      expect(result.stderr).not.toContain(password);
    }
    const json = await runCli("lds", ["search", "react", "--json"], replica(dir));
    expect(JSON.parse(json.stderr.trim().split("\n").at(-1)!)).toMatchObject({ error: "engine_unsupported" });
    expect(fs.existsSync(dir)).toBe(false);
    // A restore into PostgreSQL is the command line's (test/cli/postgres-restore.test.ts): a missing archive is
    // refused before the data directory is made.
    const restore = await runCli("restore", ["/nonexistent.tar", "--yes"], replica(dir));
    expect(restore.exitCode, restore.stderr).not.toBe(0);
    expect(restore.stderr).toMatch(/^Error: No archive at \/nonexistent\.tar\./m);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("refuses a database at a newer schema (schema_too_new, exit 6) and changes nothing", async () => {
    const newer = await server.newDatabase();
    try {
      const first = await runCli("lds", ["teams", "list"], replica(tempDir(), { LDS_DATABASE_URL: newer.url }));
      expect(first.exitCode, first.stderr).toBe(0);
      await server.asSuperuser(newer.name, (c) => c.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')"));
      const result = await runCli("lds", ["teams", "list"], replica(tempDir(), { LDS_DATABASE_URL: newer.url }));
      expect(result.exitCode).toBe(6);
      expect(result.stderr).toMatch(new RegExp(`^Error: The database at 127\\.0\\.0\\.1:${server.port} is at schema version 999`, "m"));
    } finally {
      await newer.drop();
    }
  });

  it("a stopped database is database_unreachable (exit 8) within the connect timeout, naming host and port, never the password", async () => {
    await server.down();
    try {
      const started = Date.now();
      const result = await runCli("lds", ["keys", "list"], replica(tempDir(), { LDS_DATABASE_CONNECT_TIMEOUT_MS: "2000" }));
      expect(Date.now() - started).toBeLessThan(2_000 + 5_000);
      expect(result.exitCode).toBe(8);
      const lines = result.stderr.trim().split("\n");
      expect(lines.filter((line) => line.startsWith("Error: "))).toEqual([`Error: The PostgreSQL server at 127.0.0.1:${server.port} cannot be reached (ECONNREFUSED).`]);
      expect(result.stderr).not.toContain(password);
      expect(result.stderr).not.toContain(database.url);
    } finally {
      await server.up();
    }
  });
});

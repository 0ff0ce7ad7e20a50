import { randomBytes } from "node:crypto";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LdsError } from "../../../src/errors.js";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { POSTGRES_MIGRATIONS } from "../../../src/store/postgres/schema.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";
import { tempDir } from "../../helpers/temp.js";

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

const key = () => randomBytes(32);

async function columnsOf(url: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position",
    );
    const tables: Record<string, string[]> = {};
    for (const row of rows) (tables[row.table_name] ??= []).push(row.column_name);
    return tables;
  } finally {
    await client.end();
  }
}

/** Tables only PostgreSQL has: the snippets' vectors (schema 14), which lds.db keeps in vectors.db. */
const POSTGRES_ONLY: Record<string, string[]> = { snippet_vectors: ["snippet_id", "vector"], request_windows: ["key", "started_ms", "window_ms", "count"] };

it("has lds.db's tables at schema 14 with the same columns in the same order, without the full-text tables, and the vectors", async () => {
  const root = tempDir("lds-pg-schema-");
  const volume = await openVolume(root);
  await volume.close();
  const sqlite = new Database(path.join(root, "lds.db"), { readonly: true });
  const expected: Record<string, string[]> = {};
  try {
    const tables = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'snippets_fts%' ORDER BY name").pluck().all() as string[];
    for (const table of tables) expected[table] = sqlite.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[];
  } finally {
    sqlite.close();
  }
  const database = await server.newDatabase();
  const opened = await openPostgresStore({ settings: { url: database.url } }, key());
  try {
    expect(await opened.store.schemaVersion()).toBe(14);
    expect(Object.keys(expected).length).toBeGreaterThan(15);
    expect(expected.jobs?.slice(-3)).toEqual(["lease_owner", "lease_until", "attempts"]);
    expect(await columnsOf(database.url)).toEqual({ ...expected, ...POSTGRES_ONLY });
  } finally {
    await opened.close();
    await database.drop();
  }
});

it("applies the schema once when several replicas open an empty database at the same moment", async () => {
  const database = await server.newDatabase();
  const replicas = await Promise.all([1, 2, 3, 4].map(() => openPostgresStore({ settings: { url: database.url, max: 2 } }, key())));
  try {
    expect(await Promise.all(replicas.map((r) => r.store.schemaVersion()))).toEqual([14, 14, 14, 14]);
    const versions = await server.asSuperuser(database.name, async (c) => (await c.query("SELECT version FROM schema_migrations ORDER BY version")).rows);
    expect(versions).toEqual([{ version: 13 }, { version: 14 }]);
  } finally {
    await Promise.all(replicas.map((r) => r.close()));
    await database.drop();
  }
});

it("refuses a database at a newer schema with schema_too_new, and changes nothing", async () => {
  const database = await server.newDatabase();
  const first = await openPostgresStore({ settings: { url: database.url } }, key());
  await first.close();
  await server.asSuperuser(database.name, (c) => c.query("INSERT INTO schema_migrations (version, name) VALUES (15, 'from a newer LDS')"));
  const before = await columnsOf(database.url);
  const error = await openPostgresStore({ settings: { url: database.url } }, key()).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(LdsError);
  expect((error as LdsError).code).toBe("schema_too_new");
  expect((error as LdsError).message).toMatch(/version 15.*up to 14/);
  expect(await columnsOf(database.url)).toEqual(before);
  expect(await server.asSuperuser(database.name, async (c) => (await c.query("SELECT version FROM schema_migrations ORDER BY version")).rows)).toEqual([{ version: 13 }, { version: 14 }, { version: 15 }]);
  await database.drop();
});

it("moves a database at schema 13 to 14 under the advisory lock, keeping its jobs, each with no lease and 0 attempts", async () => {
  const database = await server.newDatabase();
  try {
    // A database as the previous LDS left it (as its role, which owns what it creates): step 13 only, with a job.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL DEFAULT 'then')");
      await client.query(POSTGRES_MIGRATIONS[0]!.sql);
      await client.query("INSERT INTO schema_migrations (version, name) VALUES (13, $1)", [POSTGRES_MIGRATIONS[0]!.name]);
      await client.query("INSERT INTO libraries (id, title, source) VALUES ('/a/b', 'b', 'git')");
      await client.query("INSERT INTO jobs (library_id, kind, state) VALUES ('/a/b', 'ingest', 'queued')");
    } finally {
      await client.end();
    }
    const replicas = await Promise.all([1, 2].map(() => openPostgresStore({ settings: { url: database.url, max: 2 } }, key())));
    try {
      expect(await Promise.all(replicas.map((r) => r.store.schemaVersion()))).toEqual([14, 14]);
      const job = await server.asSuperuser(database.name, async (c) => (await c.query("SELECT library_id, lease_owner, lease_until, attempts FROM jobs")).rows);
      expect(job).toEqual([{ library_id: "/a/b", lease_owner: null, lease_until: null, attempts: 0 }]);
      const versions = await server.asSuperuser(database.name, async (c) => (await c.query("SELECT version FROM schema_migrations ORDER BY version")).rows);
      expect(versions).toEqual([{ version: 13 }, { version: 14 }]);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  } finally {
    await database.drop();
  }
});

it("reports a server nobody answers at as database_unreachable naming host and port, never the password, within the connect timeout", async () => {
  const { freePort } = await import("../../helpers/s3-server.js");
  const port = await freePort();
  const password = "s3cret-Passw0rd";
  const started = Date.now();
  const error = await openPostgresStore({ settings: { url: `postgres://lds:${password}@127.0.0.1:${port}/lds`, connectTimeoutMs: 2_000 } }, key()).catch((err: unknown) => err);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(error).toBeInstanceOf(LdsError);
  expect((error as LdsError).code).toBe("database_unreachable");
  expect((error as LdsError).message).toContain(`127.0.0.1:${port}`);
  expect(JSON.stringify({ message: (error as LdsError).message, hint: (error as LdsError).hint })).not.toContain(password);
});

it("refuses a database URL it cannot read with validation_error, without repeating it", async () => {
  const error = await openPostgresStore({ settings: { url: "postgres://lds:s3cret-Passw0rd@[no-such-host:5432/lds" } }, key()).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(LdsError);
  expect((error as LdsError).code).toBe("validation_error");
  expect(`${(error as LdsError).message} ${(error as LdsError).hint}`).not.toContain("s3cret");
});

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { expect, it } from "vitest";
import { LdsError } from "../../../src/errors.js";
import { exportRecords } from "../../../src/engine/postgres/records-export.js";
import { importRecords } from "../../../src/engine/postgres/records-import.js";
import { swapInRestoredSchema } from "../../../src/engine/postgres/schema-swap.js";
import { SERVING_LOCK } from "../../../src/engine/postgres/serving-lock.js";
import { createRecordsFile } from "../../../src/engine/sqlite/records-file-writer.js";
import { openPool } from "../../../src/store/postgres/pool.js";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { databasePerTest } from "./database-per-test.js";
import { freePort } from "../../helpers/s3-server.js";
import { tempDir } from "../../helpers/temp.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { publish, snippet } from "../../store/contract/snippets.contract.js";

// What the copies refuse, and that a refusal changes nothing: a swap while replicas serve, files that are not lds.db
// or at another schema version, rows PostgreSQL cannot take, a database newer than this build or with a table the
// archive has no place for.

const postgres = databasePerTest();

/** The LdsError an operation fails with. */
async function failure(operation: Promise<unknown>): Promise<LdsError> {
  const error = await operation.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(LdsError);
  return error as LdsError;
}

/** A database serving one team of its own (the live schema), and its pool. */
async function liveDatabase(): Promise<{ url: string; pool: pg.Pool }> {
  const { url, pool } = await postgres.fresh();
  const opened = await openPostgresStore({ pool, url }, Buffer.alloc(32, 1));
  await opened.store.teams.create("live", "free");
  return { url, pool };
}

/** The state a refusal must leave alone: the live schema's teams and the schemas present. */
async function stateOf(pool: pg.Pool) {
  return {
    current: (await pool.query("SELECT current_schema() AS s")).rows[0].s as string,
    teams: (await pool.query("SELECT name FROM teams ORDER BY name")).rows.map((r) => r.name as string),
    schemas: (await pool.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lds_%' ORDER BY 1")).rows.map((r) => r.nspname as string),
  };
}

/** An lds.db with a library and two snippets, made by the SQLite engine. */
async function recordsFile(): Promise<string> {
  const root = tempDir("lds-pg-guards-");
  const volume = await openVolume(root);
  await volume.store.libraries.create(newLibrary("/acme/widgets"));
  await publish(volume.store, "/acme/widgets", "", [snippet(1), snippet(2)]);
  await volume.store.teams.create("restored", "pro");
  volume.close();
  return path.join(root, "lds.db");
}

it("refuses the swap while a replica holds the serving lock, naming it, within the wait, and changes nothing; once it lets go, the swap keeps the previous schema readable", async () => {
  const { url, pool } = await liveDatabase();
  const { schema } = await importRecords(await recordsFile(), pool);
  const replica = new pg.Client({ connectionString: url, application_name: "lds serve replica-a" });
  await replica.connect();
  try {
    await replica.query("SELECT pg_advisory_lock_shared($1)", [SERVING_LOCK]);
    const before = await stateOf(pool);
    const started = Date.now();
    const error = await failure(swapInRestoredSchema(pool, schema, { lockWaitMs: 300 }));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.code).toBe("volume_locked");
    expect(error.message).toMatch(/Replicas are serving/);
    expect(error.message).toContain("lds serve replica-a");
    expect(error.message).not.toContain(new URL(url).password);
    expect(await stateOf(pool)).toEqual(before);
    expect(before.teams).toEqual(["live"]);
    expect(before.schemas).toEqual([schema]);
  } finally {
    await replica.end();
  }
  const { previous } = await swapInRestoredSchema(pool, schema, { lockWaitMs: 300 });
  const after = await stateOf(pool);
  expect(after).toEqual({ current: "public", teams: ["restored"], schemas: [previous] });
  expect((await pool.query(`SELECT name FROM ${previous}.teams`)).rows).toEqual([{ name: "live" }]);
});

it("refuses to swap in a schema that no restore made, and changes nothing", async () => {
  const { pool } = await liveDatabase();
  await pool.query("CREATE SCHEMA lds_restore_made_by_hand");
  const before = await stateOf(pool);
  expect((await failure(swapInRestoredSchema(pool, "lds_restore_made_by_hand"))).code).toBe("validation_error");
  expect((await failure(swapInRestoredSchema(pool, "lds_restore_missing"))).message).toMatch(/no restored schema lds_restore_missing/);
  expect(await stateOf(pool)).toEqual(before);
});

it("refuses files that are not lds.db, or at another schema version, before PostgreSQL is touched", async () => {
  const { pool } = await liveDatabase();
  const before = await stateOf(pool);
  const dir = tempDir("lds-pg-bad-files-");
  const text = path.join(dir, "notes.txt");
  fs.writeFileSync(text, "not a database at all, just some text that is long enough to not look like an empty file\n".repeat(50));
  const other = path.join(dir, "other.db");
  const otherDb = new Database(other);
  otherDb.exec("CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO things (name) VALUES ('x')");
  otherDb.close();
  const older = path.join(dir, "older.db");
  createRecordsFile(older, 12).finish();
  const newer = path.join(dir, "newer.db");
  fs.copyFileSync(await recordsFile(), newer);
  const newerDb = new Database(newer);
  newerDb.exec("INSERT INTO schema_migrations (version, name) VALUES (99, 'future'); PRAGMA user_version = 99");
  newerDb.close();

  expect(await failure(importRecords(text, pool))).toMatchObject({ code: "archive_corrupt", message: expect.stringMatching(/notes\.txt is not an LDS records database/) });
  expect(await failure(importRecords(other, pool))).toMatchObject({ code: "archive_corrupt", message: expect.stringMatching(/other\.db is not an LDS records database/) });
  expect(await failure(importRecords(older, pool))).toMatchObject({ code: "validation_error", message: expect.stringMatching(/older\.db is at schema version 12/) });
  expect(await failure(importRecords(newer, pool))).toMatchObject({ code: "schema_too_new", message: expect.stringMatching(/schema version 99/) });
  expect(await failure(importRecords(path.join(dir, "missing.db"), pool))).toMatchObject({ code: "path_not_found" });
  expect(await stateOf(pool)).toEqual(before);
});

it("refuses a file whose rows PostgreSQL cannot take (a snippet of no library), naming the table, and leaves no schema behind", async () => {
  const { pool } = await liveDatabase();
  const before = await stateOf(pool);
  const file = await recordsFile();
  const db = new Database(file);
  db.pragma("foreign_keys = OFF");
  db.prepare("INSERT INTO snippets (library_id, kind, title, content) VALUES ('/nobody/here', 'code', 't', 'c')").run();
  db.close();
  const error = await failure(importRecords(file, pool));
  expect(error.code).toBe("archive_corrupt");
  expect(error.message).toMatch(/A row of snippets cannot be copied/);
  expect(await stateOf(pool)).toEqual(before);
});

it("refuses to export a database newer than this build's SQLite schema, or with a table lds.db has no place for, and leaves no file; skips PostgreSQL's own tables", async () => {
  const { pool } = await liveDatabase();
  const dir = tempDir("lds-pg-export-guards-");
  const target = path.join(dir, "lds.db");

  await pool.query("CREATE TABLE unplanned (id bigint)");
  expect(await failure(exportRecords(pool, target))).toMatchObject({ code: "internal_error", message: expect.stringMatching(/no place for: unplanned/) });
  expect(fs.readdirSync(dir)).toEqual([]);
  await pool.query("DROP TABLE unplanned");

  // PostgreSQL's own (schema 14's vectors): skipped, not refused.
  await pool.query("CREATE TABLE IF NOT EXISTS snippet_vectors (snippet_id bigint PRIMARY KEY, vector bytea)");
  expect((await exportRecords(pool, target)).rows).toMatchObject({ teams: 1 });
  expect(await failure(exportRecords(pool, target))).toMatchObject({ code: "validation_error", message: expect.stringMatching(/already exists/) });
  fs.rmSync(target);

  await pool.query("INSERT INTO schema_migrations (version, name) VALUES (99, 'future')");
  expect(await failure(exportRecords(pool, target))).toMatchObject({ code: "schema_too_new", message: expect.stringMatching(/schema version 99/) });
  expect(fs.readdirSync(dir)).toEqual([]);
});

it("an unreachable server is database_unreachable, naming host and port and never the password", async () => {
  const port = await freePort();
  const unreachable = openPool({ url: `postgres://lds:s3cret-pw@127.0.0.1:${port}/lds`, connectTimeoutMs: 2_000 });
  try {
    const dir = tempDir("lds-pg-unreachable-");
    const file = await recordsFile();
    for (const operation of [() => exportRecords(unreachable, path.join(dir, "lds.db")), () => importRecords(file, unreachable), () => swapInRestoredSchema(unreachable, "lds_restore_x")]) {
      const error = await failure(operation());
      expect(error.code).toBe("database_unreachable");
      expect(error.message).toContain(`127.0.0.1:${port}`);
      expect(error.message).not.toContain("s3cret-pw");
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  } finally {
    await unreachable.end();
  }
});

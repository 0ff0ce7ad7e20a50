import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { isLdsError } from "../../../src/errors.js";
import { migrate, schemaVersion } from "../../../src/engine/sqlite/migrate.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../../../src/engine/sqlite/migrations.js";
import { openStore } from "../../../src/engine/sqlite/open-store.js";
import { tempDir } from "../../helpers/temp.js";

const tables = (db: Database.Database) => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];

describe("migrations", () => {
  it("bring an empty database to the newest schema and record every step", () => {
    const db = openStore(path.join(tempDir(), "lds.db"));
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(tables(db)).toEqual(expect.arrayContaining(["settings", "teams", "users", "api_keys", "libraries", "snippets", "jobs", "secrets", "snippets_fts"]));
    const recorded = db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all();
    expect(recorded).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
  });

  it("migrate an older database and keep its rows", () => {
    const file = path.join(tempDir(), "lds.db");
    const old = new Database(file);
    migrate(old, MIGRATIONS, 2);
    old.prepare("INSERT INTO libraries (id, title, source) VALUES ('/a/b', 'B', 'git')").run();
    old.prepare("INSERT INTO snippets (library_id, kind, title, content) VALUES ('/a/b', 'info', 'Install', 'npm install widgets')").run();
    expect(schemaVersion(old)).toBe(2);
    old.close();

    const db = openStore(file);
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(db.prepare("SELECT title FROM libraries WHERE id = '/a/b'").pluck().get()).toBe("B");
    // Migration 3 indexed the rows that were already there.
    expect(db.prepare("SELECT count(*) FROM snippets_fts WHERE snippets_fts MATCH 'widgets'").pluck().get()).toBe(1);
    db.close();
  });

  it("refuse a database written by a newer release, without changing it", () => {
    const file = path.join(tempDir(), "lds.db");
    const newer = new Database(file);
    newer.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 5}`);
    newer.close();
    let caught: unknown;
    try {
      openStore(file);
    } catch (err) {
      caught = err;
    }
    expect(isLdsError(caught, "schema_too_new")).toBe(true);
    expect((caught as Error).message).toContain(`schema version ${LATEST_SCHEMA_VERSION + 5}`);
    const check = new Database(file);
    expect(schemaVersion(check)).toBe(LATEST_SCHEMA_VERSION + 5);
    expect(tables(check)).toEqual([]);
    check.close();
  });

  it("leave a database at a whole version when a migration fails", () => {
    const db = new Database(":memory:");
    const broken = [
      { version: 1, name: "one", sql: "CREATE TABLE a (x);" },
      { version: 2, name: "two", sql: "CREATE TABLE b (x); INSERT INTO nope VALUES (1);" },
    ];
    expect(() => migrate(db, broken)).toThrow(/nope/);
    expect(schemaVersion(db)).toBe(1);
    expect(tables(db)).toEqual(["a", "schema_migrations"]);
  });
});

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { checkStoredTables, IntegrityProblem, openForCheck } from "../../src/archive/database-checks.js";
import { tempDir } from "../helpers/temp.js";

/** A database of two tables and an index, then `finish` on its connection before it is closed. */
function makeDatabase(finish: (db: Database.Database) => void): string {
  const file = path.join(tempDir("lds-checks-"), "check.db");
  const db = new Database(file);
  db.exec("CREATE TABLE kept (id INTEGER PRIMARY KEY, body TEXT); CREATE INDEX kept_body ON kept(body); CREATE TABLE dropped (body BLOB)");
  const insert = db.prepare("INSERT INTO kept (body) VALUES (?)");
  for (let i = 0; i < 200; i++) insert.run(`row ${i} `.repeat(40));
  const blob = db.prepare("INSERT INTO dropped VALUES (randomblob(3000))");
  for (let i = 0; i < 50; i++) blob.run();
  finish(db);
  db.close();
  return file;
}

/** Rewrite a 4-byte big-endian field of the file's header. */
function patchHeader(file: string, offset: number, change: (value: number) => number): void {
  const bytes = fs.readFileSync(file);
  bytes.writeUInt32BE(change(bytes.readUInt32BE(offset)), offset);
  fs.writeFileSync(file, bytes);
}

function check(file: string): unknown {
  const db = openForCheck(file);
  try {
    checkStoredTables(db);
    return "ok";
  } catch (err) {
    return err;
  } finally {
    db.close();
  }
}

describe("the integrity check of stored tables (virtual tables checked on another thread)", () => {
  it("passes a sound snapshot, and finds pages no b-tree uses when the header hides the free list", () => {
    expect(check(makeDatabase((db) => (db.exec("DROP TABLE dropped"), db.exec("VACUUM"))))).toBe("ok");
    const hidden = makeDatabase((db) => db.exec("DROP TABLE dropped"));
    // Zero the free list's first trunk page and count: its pages now belong to nothing.
    patchHeader(hidden, 32, () => 0);
    patchHeader(hidden, 36, () => 0);
    const found = check(hidden);
    expect(found).toBeInstanceOf(IntegrityProblem);
    expect((found as Error).message).toMatch(/^\d+ page\(s\) never used$/);
  });

  it("runs SQLite's whole integrity_check on a file with free pages, which walks the free list", () => {
    const withFreePages = makeDatabase((db) => db.exec("DROP TABLE dropped"));
    expect(check(withFreePages)).toBe("ok");
    patchHeader(withFreePages, 36, (count) => count + 1);
    const found = check(withFreePages);
    expect(found).toBeInstanceOf(IntegrityProblem);
    expect((found as Error).message).toMatch(/free/i);
  });
});

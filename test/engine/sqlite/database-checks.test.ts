import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { checkStoredTables, IntegrityProblem, openForCheck } from "../../../src/engine/sqlite/database-checks.js";
import { tempDir } from "../../helpers/temp.js";

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

/** Rewrite a 4-byte big-endian field of page `page` (numbered from 1). */
function patchPage(file: string, page: number, offset: number, change: (value: number) => number): void {
  const bytes = fs.readFileSync(file);
  const at = (page - 1) * bytes.readUInt16BE(16) + offset;
  bytes.writeUInt32BE(change(bytes.readUInt32BE(at)), at);
  fs.writeFileSync(file, bytes);
}

function copyOf(file: string): string {
  const copy = path.join(tempDir("lds-checks-"), "copy.db");
  fs.copyFileSync(file, copy);
  return copy;
}

function messageOf(found: unknown): string {
  expect(found).toBeInstanceOf(IntegrityProblem);
  return (found as Error).message;
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

  it("accounts for the free pages of a file that has them, and finds a free list that lies", () => {
    const withFreePages = makeDatabase((db) => db.exec("DROP TABLE dropped"));
    expect(fs.readFileSync(withFreePages).readUInt32BE(36)).toBeGreaterThan(0);
    expect(check(withFreePages)).toBe("ok");

    const counted = copyOf(withFreePages);
    patchHeader(counted, 36, (count) => count + 1);
    // SQLite's per-table check walks the free list too.
    expect(messageOf(check(counted))).toMatch(/Freelist: size is \d+ but should be \d+/);

    // The first trunk page lists page 2, which a table uses.
    const shared = copyOf(withFreePages);
    const trunk = fs.readFileSync(shared).readUInt32BE(32);
    patchPage(shared, trunk, 8, () => 2);
    // Only the page accounting finds this one: SQLite's per-table check sees each list alone.
    expect(messageOf(check(shared))).toBe("1 page(s) are both free and in use");

    // A trunk page that names itself as the next one: a loop, found rather than followed.
    const looped = copyOf(withFreePages);
    patchPage(looped, trunk, 0, () => trunk);
    expect(messageOf(check(looped))).toMatch(/Freelist: 2nd reference to page \d+/);
  });
});

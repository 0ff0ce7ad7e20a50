import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { readFreePages } from "../../../src/engine/sqlite/free-pages.js";
import type { LdsError } from "../../../src/errors.js";
import { copyDatabase } from "../../../src/engine/sqlite/copy-database.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { tempDir } from "../../helpers/temp.js";
import { dbOf } from "../../helpers/sqlite-db.js";

const MARKER = "deleted-library-text-7f3a";

/** A WAL database that once held MARKER in rows since deleted: the pages they used are on its free list. */
function liveDatabaseWithDeletedRows(): string {
  const file = path.join(tempDir("lds-copy-"), "live.db");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE kept (body TEXT); CREATE TABLE removed (body TEXT)");
  const keep = db.prepare("INSERT INTO kept VALUES (?)");
  const remove = db.prepare("INSERT INTO removed VALUES (?)");
  for (let i = 0; i < 100; i++) {
    keep.run(`kept ${i} `.repeat(50));
    // The marker sits at the end of a long value, in its overflow pages, which go to the free list whole.
    remove.run(`${"filler ".repeat(3000)}${MARKER}`);
  }
  db.exec("DELETE FROM removed");
  db.close();
  return file;
}

describe("copying a live database for an archive", () => {
  it("copies a consistent database in journal mode DELETE, private, with its free pages zeroed", async () => {
    const source = liveDatabaseWithDeletedRows();
    expect(fs.readFileSync(source).includes(MARKER)).toBe(true);
    const copy = path.join(tempDir("lds-copy-"), "copy.db");
    await copyDatabase(source, copy, false);

    const bytes = fs.readFileSync(copy);
    expect([bytes[18], bytes[19]]).toEqual([1, 1]);
    expect(fs.existsSync(`${copy}-wal`)).toBe(false);
    expect(fs.statSync(copy).mode & 0o777).toBe(0o600);
    const free = readFreePages(copy);
    expect("trunks" in free && free.trunks.flatMap((t) => [t.page, ...t.leaves]).length).toBeGreaterThan(100);
    expect(bytes.includes(MARKER)).toBe(false);

    const db = new Database(copy, { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.prepare("SELECT count(*) FROM kept").pluck().get()).toBe(100);
    db.close();
  });

  it("copies the state it had when it called onPinned, not a later one, so that a second copy can start then", async () => {
    const source = liveDatabaseWithDeletedRows();
    const writer = new Database(source);
    writer.pragma("journal_mode = WAL");
    const copy = path.join(tempDir("lds-copy-"), "copy.db");
    let pinnedAt: number | undefined;
    await copyDatabase(source, copy, false, () => {
      // Written after the pin and before a page is copied: the copy must not hold it.
      writer.prepare("INSERT INTO kept VALUES ('after the pin')").run();
      pinnedAt = Date.now();
    });
    expect(pinnedAt).toBeDefined();
    expect(writer.prepare("SELECT count(*) FROM kept").pluck().get()).toBe(101);
    writer.close();
    const db = new Database(copy, { readonly: true });
    expect(db.prepare("SELECT count(*) FROM kept").pluck().get()).toBe(100);
    db.close();
  });

  it("refuses a live database that is not whole with what to do, and writes no copy", async () => {
    const source = liveDatabaseWithDeletedRows();
    const fd = fs.openSync(source, "r+");
    fs.writeSync(fd, Buffer.from("not a database header, overwritten by a failing disk"), 0, undefined, 0);
    fs.closeSync(fd);
    const copy = path.join(tempDir("lds-copy-"), "copy.db");
    const error = await copyDatabase(source, copy, false).then(
      () => undefined,
      (err: unknown) => err as LdsError,
    );
    expect(error?.code).toBe("data_dir_invalid");
    expect(error?.message).toBe(`${source} is damaged (file is not a database); no archive was written.`);
    expect(error?.hint).toMatch(/^Keep the archives you have .*PRAGMA integrity_check.*lds-restore ARCHIVE --yes\)\.$/);
    expect(fs.existsSync(copy)).toBe(false);
  });

  it("runs the live database with secure_delete, so a deleted row's text leaves its page too", async () => {
    const root = tempDir("lds-copy-");
    const volume = await openVolume(root);
    const db = dbOf(volume);
    db.prepare("INSERT INTO teams (name, plan) VALUES ('t', 'pro')").run();
    const add = db.prepare("INSERT INTO libraries (id, team_id, title, source, state) VALUES (?, 1, ?, 'git', 'finalized')");
    add.run("/acme/kept", "kept library");
    add.run("/acme/removed", MARKER);
    db.prepare("DELETE FROM libraries WHERE id = '/acme/removed'").run();
    db.pragma("wal_checkpoint(TRUNCATE)");
    volume.close();
    const bytes = fs.readFileSync(path.join(root, "lds.db"));
    expect(bytes.includes("kept library")).toBe(true);
    expect(bytes.includes(MARKER)).toBe(false);
  });
});

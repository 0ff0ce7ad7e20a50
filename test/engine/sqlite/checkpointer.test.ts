import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { startCheckpointer } from "../../../src/engine/sqlite/checkpointer.js";
import { eventually } from "../../helpers/server.js";
import { tempDir } from "../../helpers/temp.js";

describe("WAL checkpoints in a thread of their own (the server's)", () => {
  it("copy the WAL into the database while the writing connection never checkpoints, and hand checkpoints back at close", async () => {
    const file = path.join(tempDir(), "wal.db");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (x BLOB)");
    const checkpointer = startCheckpointer(
      [{ db, file }],
      (err) => {
        throw err;
      },
      50,
    );
    try {
      // The writing connection never checkpoints by itself (that is what the thread takes over). Its file's size is no
      // proof of it: the thread may checkpoint the table's creation, or the insert below, at any moment (a size read
      // before and after each raced the thread on a busy machine).
      expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
      // 8 MiB in one transaction: twice SQLite's own checkpoint threshold, which this connection no longer applies.
      const insert = db.prepare("INSERT INTO t VALUES (randomblob(65536))");
      db.transaction(() => {
        for (let i = 0; i < 128; i++) insert.run();
      })();
      // The thread's checkpoint is what moves the pages into the database file.
      await eventually(async () => fs.statSync(file).size > 8 * 1024 * 1024);
    } finally {
      await checkpointer.close();
    }
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    db.close();
  });

  it("checkpoint now when asked, without waiting for the next interval, and answer once the pages are in the file", async () => {
    const file = path.join(tempDir(), "wal.db");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (x BLOB)");
    // An interval no test waits for: only `now` can move the pages.
    const checkpointer = startCheckpointer(
      [{ db, file }],
      (err) => {
        throw err;
      },
      3_600_000,
    );
    try {
      const insert = db.prepare("INSERT INTO t VALUES (randomblob(65536))");
      db.transaction(() => {
        for (let i = 0; i < 64; i++) insert.run();
      })();
      const before = fs.statSync(file).size;
      await checkpointer.now();
      expect(fs.statSync(file).size).toBeGreaterThan(before + 4 * 1024 * 1024);
    } finally {
      await checkpointer.close();
    }
    // Once the thread is gone, `now` answers at once (nothing is left to checkpoint on request).
    await checkpointer.now();
    db.close();
  });
});

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { exportRecords } from "../../../src/engine/postgres/records-export.js";
import { importRecords } from "../../../src/engine/postgres/records-import.js";
import { swapInRestoredSchema } from "../../../src/engine/postgres/schema-swap.js";
import { LATEST_SCHEMA_VERSION } from "../../../src/engine/sqlite/migrations.js";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { dbOf } from "../../helpers/sqlite-db.js";
import { tempDir } from "../../helpers/temp.js";
import { publish, snippet } from "../../store/contract/snippets.contract.js";
import { databasePerTest } from "./database-per-test.js";
import { OLD_LIBRARY_ID, readEveryRecord, seedEveryRecord, tablesOfFile } from "./every-record.js";

// A SQLite volume's records go into PostgreSQL (a new schema, swapped in) and back into a new lds.db, as a
// cross-restore SQLite → PostgreSQL → SQLite does: every read answers alike on the three, every row is kept with its
// ids, and the full-text index of the file made from PostgreSQL is whole.

const postgres = databasePerTest();

const maxOf = (rows: unknown[], column: string) => Math.max(...rows.map((row) => (row as Record<string, number>)[column]!));

it("copies every record of a SQLite volume into PostgreSQL and back into lds.db: reads equal on the three, rows equal column for column, ids kept", async () => {
  const root = tempDir("lds-pg-round-trip-");
  const volume = await openVolume(root);
  const seeded = await seedEveryRecord(volume.store);
  dbOf(volume).prepare("INSERT INTO library_redirects (old_id, new_id, team_id, vectors_moved) VALUES (?, ?, NULL, 1)").run(OLD_LIBRARY_ID, seeded.library);
  const expected = await readEveryRecord(volume.store, seeded);
  volume.close();
  const source = path.join(root, "lds.db");
  const sourceTables = tablesOfFile(source);
  expect(expected.count).toBe(3);
  expect(expected.redirect).toBe(seeded.library);
  expect(expected.secret).toBe("shh\ttab");

  const { url, pool } = await postgres.fresh();
  // The database already serves records of its own: they are what the swap sets aside.
  const live = await openPostgresStore({ pool, url }, volume.key);
  await live.store.teams.create("before-restore", "free");

  const imported = await importRecords(source, pool);
  expect(imported.schema).toMatch(/^lds_restore_\d{8}t\d{6}z$/);
  expect(imported.rows).toMatchObject({ snippets: sourceTables.snippets!.length, jobs: sourceTables.jobs!.length, teams: 2 });
  expect(
    (await live.store.teams.list()).map((t) => t.name),
    "the live schema is untouched until the swap",
  ).toEqual(["before-restore"]);

  const { previous } = await swapInRestoredSchema(pool, imported.schema);
  expect(previous).toMatch(/^lds_pre_restore_\d{8}t\d{6}z$/);
  const restored = await openPostgresStore({ pool, url }, volume.key);
  expect(await readEveryRecord(restored.store, seeded)).toEqual(expected);
  const kept = await pool.query(`SELECT name FROM ${previous}.teams`);
  expect(kept.rows, "the previous schema is kept, readable").toEqual([{ name: "before-restore" }]);

  const exportRoot = tempDir("lds-pg-exported-");
  const exportedFile = path.join(exportRoot, "lds.db");
  const exported = await exportRecords(pool, exportedFile);
  expect(exported.version).toBe(LATEST_SCHEMA_VERSION);
  expect(exported.rows.snippets).toBe(sourceTables.snippets!.length);
  expect(tablesOfFile(exportedFile)).toEqual(sourceTables);
  expect((fs.statSync(exportedFile).mode & 0o777).toString(8)).toBe("600");
  const file = new Database(exportedFile);
  try {
    expect(file.pragma("journal_mode", { simple: true })).toBe("delete");
    expect(file.pragma("user_version", { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    // FTS5 checks its index against the snippets (the external content table) with rank 1.
    file.prepare("INSERT INTO snippets_fts (snippets_fts, rank) VALUES ('integrity-check', 1)").run();
    // The index answers as the source's does: every word query finds the same snippets.
    const source = new Database(path.join(root, "lds.db"), { readonly: true });
    const match = (db: Database.Database, words: string) => db.prepare("SELECT rowid FROM snippets_fts WHERE snippets_fts MATCH ? ORDER BY rowid").pluck().all(words);
    try {
      for (const words of ["content", "snippet", "emoji", "漢字", "tabs", "page"]) expect(match(file, words), words).toEqual(match(source, words));
    } finally {
      source.close();
    }
    expect(match(file, "emoji")).toEqual([seeded.snippetIds[0]]);
    expect(match(file, "content")).toHaveLength(sourceTables.snippets!.length - 1);
    expect(file.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'").pluck().get(), "the full-text triggers are back").toBe(3);
  } finally {
    file.close();
  }
  fs.copyFileSync(path.join(root, "secret.key"), path.join(exportRoot, "secret.key"));
  const reopened = await openVolume(exportRoot);
  try {
    expect(await readEveryRecord(reopened.store, seeded)).toEqual(expected);
  } finally {
    reopened.close();
  }

  // New rows in PostgreSQL take ids past the copied ones: the identities moved.
  const store = restored.store;
  const added = await publish(store, seeded.library, "v2", [snippet(100)]);
  expect(added.ids[0]).toBeGreaterThan(maxOf(sourceTables.snippets!, "id"));
  expect(await store.jobs.enqueue({ libraryId: seeded.library, kind: "refresh", payload: {} })).toBeGreaterThan(maxOf(sourceTables.jobs!, "id"));
  expect((await store.teams.create("after-restore", "free")).id).toBeGreaterThan(maxOf(sourceTables.teams!, "id"));
  expect((await store.users.add((await store.teams.find("acme"))!, "new@acme.test", "member")).id).toBeGreaterThan(maxOf(sourceTables.users!, "id"));
  expect(await store.oauth.saveGrant({ teamId: seeded.teamId, provider: "github", account: "o", scopes: "repo", tokens: { accessToken: "a" }, target: { kind: "git", hosts: ["github.com"] } })).toBeGreaterThan(
    maxOf(sourceTables.oauth_grants!, "id"),
  );
});

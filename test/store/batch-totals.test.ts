import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import { migrate } from "../../src/engine/sqlite/migrate.js";
import { MIGRATIONS } from "../../src/engine/sqlite/migrations.js";
import { openStore } from "../../src/engine/sqlite/open-store.js";
import { snippetTotals } from "../../src/store/sqlite/snippets.js";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import { tempDir } from "../helpers/temp.js";
import { dbOf } from "../helpers/sqlite-db.js";

const snippet = (i: number) => ({ kind: "info" as const, title: `retry ${i}`, description: "", language: null, content: "socket timeout ".repeat(1 + (i % 9)), sourcePath: "a.md", anchor: null, tokens: 5 });

/** The totals counted from the rows, as every request did before schema 12. */
const counted = (db: Database.Database, libraryId: string) =>
  db
    .prepare(
      `SELECT count(*) AS n, coalesce(sum(tokens), 0) AS tokens FROM snippets WHERE library_id = ? AND version = ''
       AND batch = coalesce((SELECT batch FROM snippet_batches WHERE library_id = ? AND version = '' AND state = 'live'), 0)`,
    )
    .get(libraryId, libraryId) as { n: number; tokens: number };

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0).reverse()) o.close();
});

async function volumeWithLibrary(): Promise<OpenVolume> {
  const volume = await openVolume(tempDir());
  open.push(volume);
  dbOf(volume).prepare("INSERT INTO libraries (id, title, source, state) VALUES ('/a/one', 'one', 'git', 'finalized')").run();
  return volume;
}

describe("a library's totals (schema 12)", () => {
  it("are added up as its batch is written and read from the live batch's record, not counted", async () => {
    const volume = await volumeWithLibrary();
    await replaceLibrarySnippets(
      volume,
      "/a/one",
      Array.from({ length: 600 }, (_, i) => snippet(i)),
    );
    const first = counted(dbOf(volume), "/a/one");
    expect(first.n).toBe(600);
    expect(first.tokens).toBeGreaterThan(600);
    expect(await volume.store.snippets.totals("/a/one")).toEqual(first);

    // Read, not counted: what the record says is what a request answers.
    dbOf(volume).prepare("UPDATE snippet_batches SET snippets = 12345 WHERE library_id = '/a/one' AND state = 'live'").run();
    expect((await volume.store.snippets.totals("/a/one")).n).toBe(12345);

    // A refresh's new batch has totals of its own; the replaced one's are gone with it.
    await replaceLibrarySnippets(
      volume,
      "/a/one",
      Array.from({ length: 300 }, (_, i) => snippet(i + 1000)),
    );
    expect(await volume.store.snippets.totals("/a/one")).toEqual(counted(dbOf(volume), "/a/one"));
    expect((await volume.store.snippets.totals("/a/one")).n).toBe(300);
  });

  it("are counted for rows from before batches, which no record keeps", async () => {
    const volume = await volumeWithLibrary();
    const insert = dbOf(volume).prepare("INSERT INTO snippets (library_id, version, batch, kind, title, content, tokens) VALUES ('/a/one', '', 0, 'info', ?, 'old text', ?)");
    for (let i = 0; i < 7; i++) insert.run(`old ${i}`, 10 + i);
    expect(await volume.store.snippets.totals("/a/one")).toEqual({ n: 7, tokens: 91 });
  });

  it("are counted once by the migration for the live batches of a schema 11 database", () => {
    const file = path.join(tempDir(), "lds.db");
    const old = new Database(file);
    migrate(old, MIGRATIONS, 11);
    old.prepare("INSERT INTO libraries (id, title, source, state) VALUES ('/a/one', 'one', 'git', 'finalized')").run();
    old.prepare("INSERT INTO snippet_batches (library_id, version, batch, state) VALUES ('/a/one', '', 3, 'live'), ('/a/one', '', 4, 'writing')").run();
    const insert = old.prepare("INSERT INTO snippets (library_id, version, batch, kind, title, content, tokens) VALUES ('/a/one', '', ?, 'info', 'a', 'text', ?)");
    for (let i = 0; i < 5; i++) insert.run(3, 20);
    insert.run(4, 99);
    old.close();

    const db = openStore(file);
    open.push(db);
    expect(db.prepare("SELECT batch, snippets, tokens FROM snippet_batches ORDER BY batch").all()).toEqual([
      { batch: 3, snippets: 5, tokens: 100 },
      // An unfinished batch is retired at the next start and never published: nothing to count.
      { batch: 4, snippets: null, tokens: null },
    ]);
    expect(snippetTotals(db, "/a/one")).toEqual({ n: 5, tokens: 100 });
  });
});

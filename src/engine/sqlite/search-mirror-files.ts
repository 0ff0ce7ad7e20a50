import fs from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import type Database from "better-sqlite3";
import type { SearchIndex } from "../../index/search-index.js";
import { createSqliteSearchIndex, type SqliteSearchIndex } from "../../index/sqlite/sqlite-search-index.js";
import { openVectorIndex, partitionOf, type VectorIndex } from "../../index/sqlite/vector-index.js";
import type { NewSnippet, StoredSnippet } from "../../store/records.js";
import { loadSnippets } from "../../store/sqlite/snippets.js";
import { fromSystemError } from "../../errors.js";
import { SQLITE_FILE_NAMES } from "./volume-files.js";
import { openStore } from "./open-store.js";

/**
 * A replica's search files when the records are in PostgreSQL (issue 34, "Search"): a copy of the live snippet
 * batches in files of this replica's own (`<data dir>/search/lds.db` and `vectors.db`), made by the SQLite engine's
 * migrations so that its search index (index/sqlite/) ranks on them unchanged. Derived data: the rows keep their
 * PostgreSQL ids and batch numbers (a ranking answers ids the records load), and the whole folder can be deleted and
 * fetched again. The follower (engine/postgres/search-follower.ts) is the only writer.
 *
 * A batch arrives unseen (`begin`, `add` in chunks: its rows, then their vectors), is served at once (`hold`: the
 * version's previous batch stops being served in the same transaction), and leaves in steps (`drop`). A batch is never changed
 * once held, as in PostgreSQL. What a crash interrupts (a batch half received or half dropped) is dropped at the
 * next open: only held batches are trusted.
 */
export interface SearchMirrorFiles {
  /** The search index over these files. Its writes do nothing: the follower alone fills the files. */
  readonly index: SearchIndex;
  readonly files: { records: string; vectors: string };
  /** The batches served from these files. */
  held(): MirrorBatch[];
  /**
   * These snippets of the batch the files serve for a library version, in the order asked, as the records would
   * answer them (a batch is never changed once held): ids not in that batch are left out.
   */
  load(libraryId: string, version: string, ids: number[]): StoredSnippet[];
  /** Start receiving a batch (whatever copy of it was here before is dropped first). */
  begin(batch: MirrorBatch): Promise<void>;
  /**
   * Add rows of a batch begun, with their PostgreSQL ids and vectors, in steps: rows in one transaction, then their
   * vectors, then a bounded step of the full-text index's upkeep (as the SQLite writer takes between its chunks).
   */
  add(batch: MirrorBatch, rows: MirrorSnippet[]): Promise<void>;
  /**
   * Serve a batch received whole, at once; the version's batch held until now is no longer served, and answered:
   * the caller drops it (`drop`), after the new one is known held.
   */
  hold(batch: MirrorBatch): MirrorBatch | undefined;
  /**
   * A batch no longer live in PostgreSQL (or not received whole): no longer served at once, gone from the files in
   * steps. `signal` stops the steps (the files are closing): what is left is dropped at the next open.
   */
  drop(batch: MirrorBatch, signal?: AbortSignal): Promise<void>;
  close(): void;
}

/** A library version's snippet batch as PostgreSQL has it; `startedAt` tells a batch from a later one given its number. */
export interface MirrorBatch {
  libraryId: string;
  version: string;
  batch: number;
  startedAt: string;
}

export interface MirrorSnippet extends NewSnippet {
  id: number;
  /** Undefined for a row written without one: found by its words only. */
  vector: Float32Array | undefined;
}

/**
 * Rows written or deleted per step (one transaction and an upkeep step), on the caller's event loop, which turns
 * between steps. 500 rows of about 1 KB with their vectors took 40-170 ms a step on 2 shared, busy cores; at 100,
 * the longest wait of the event loop while 10,000 rows were added, then dropped, was 85-205 ms (a full-text merge
 * step now and then), 2.2 s and 1.2-1.5 s in all. A thread of its own would take even that off requests.
 */
const STEP_ROWS = 100;

/** Where a data directory keeps its search files. */
export function searchMirrorFolder(dataDir: string): string {
  return path.join(dataDir, "search");
}

/** Open (or create) the search files under `dataDir`, for vectors of this embedder. */
export async function openSearchMirrorFiles(dataDir: string, embedder: { id: string; dimensions: number }): Promise<SearchMirrorFiles> {
  const folder = searchMirrorFolder(dataDir);
  try {
    fs.mkdirSync(folder, { recursive: true });
  } catch (err) {
    throw fromSystemError(err, folder);
  }
  const files = { records: path.join(folder, SQLITE_FILE_NAMES.records), vectors: path.join(folder, SQLITE_FILE_NAMES.vectors) };
  const db = openStore(files.records, { mappedReads: true });
  let vectors: VectorIndex;
  try {
    vectors = openVectorIndex(files.vectors, embedder, { mappedReads: true });
  } catch (err) {
    db.close();
    throw err;
  }
  const mirror = bindMirror(db, vectors, files);
  try {
    await mirror.recover(vectors.stale);
    if (vectors.stale) {
      // Another embedder's vectors (or an unfinished copy): the batches were dropped; they are fetched again.
      vectors.recreate();
      vectors.markComplete();
    }
  } catch (err) {
    mirror.close();
    throw err;
  }
  return mirror;
}

function bindMirror(db: Database.Database, vectors: VectorIndex, files: SearchMirrorFiles["files"]): SearchMirrorFiles & { recover(all: boolean): Promise<void> } {
  const search: SqliteSearchIndex = createSqliteSearchIndex(db, vectors, { store: files.records, vectors: files.vectors });
  const key = (b: MirrorBatch) => [b.libraryId, b.version, b.batch] as const;
  const insertRow = db.prepare(
    `INSERT INTO snippets (id, library_id, version, batch, kind, title, description, language, content, source_path, tokens, page_title)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const addRows = db.transaction((batch: MirrorBatch, rows: MirrorSnippet[]) => {
    for (const s of rows) insertRow.run(s.id, batch.libraryId, batch.version, batch.batch, s.kind, s.title, s.description, s.language, s.content, s.sourcePath, s.tokens, s.pageTitle);
    db.prepare("UPDATE snippet_batches SET snippets = snippets + ?, tokens = tokens + ? WHERE library_id = ? AND version = ? AND batch = ?").run(
      rows.length,
      rows.reduce((sum, s) => sum + s.tokens, 0),
      ...key(batch),
    );
  });

  /** Every row of a batch, a step per transaction (vectors first: a vector without its row is never searched), then its record. */
  async function dropBatch(libraryId: string, version: string, batch: number, signal?: AbortSignal): Promise<void> {
    const chunk = db.prepare("SELECT id FROM snippets INDEXED BY snippets_by_batch WHERE library_id = ? AND version = ? AND batch = ? LIMIT ?").pluck();
    for (let ids = chunk.all(libraryId, version, batch, STEP_ROWS) as number[]; ids.length; ids = chunk.all(libraryId, version, batch, STEP_ROWS) as number[]) {
      vectors.remove(ids);
      db.prepare("DELETE FROM snippets WHERE id IN (SELECT value FROM json_each(?))").run(JSON.stringify(ids));
      await search.upkeep();
      await nextTurn();
      if (signal?.aborted) return;
    }
    db.prepare("DELETE FROM snippet_batches WHERE library_id = ? AND version = ? AND batch = ?").run(libraryId, version, batch);
  }
  const batchesIn = (where: string) =>
    db.prepare(`SELECT library_id AS libraryId, version, batch, started_at AS startedAt FROM snippet_batches ${where} ORDER BY library_id, version, batch`).all() as MirrorBatch[];

  const index: SearchIndex = Object.create(search, {
    add: { value: async () => {} },
    remove: { value: async () => {} },
    removeLibrary: { value: async () => {} },
    beginRebuild: { value: async () => {} },
    completeRebuild: { value: async () => {} },
    // The ingesting replica warms a batch before and after publishing it, when these files do not hold it yet: an
    // in-memory part built then would be empty and kept. The follower's batches are searched as stored until then.
    prepare: { value: async () => {} },
    probe: { value: async () => [] },
  }) as SearchIndex;

  return {
    index,
    files,
    held: () => batchesIn("WHERE state = 'live'"),
    load: (libraryId, version, ids) => loadSnippets(db, libraryId, version, ids),
    async begin(batch) {
      await dropBatch(...key(batch));
      db.transaction(() => {
        // The records' foreign key wants the library; nothing here reads the row but its id.
        db.prepare("INSERT OR IGNORE INTO libraries (id, title, source, state) VALUES (?, ?, 'postgresql', 'finalized')").run(batch.libraryId, batch.libraryId);
        db.prepare("INSERT INTO snippet_batches (library_id, version, batch, state, started_at, snippets, tokens) VALUES (?, ?, ?, 'writing', ?, 0, 0)").run(...key(batch), batch.startedAt);
      })();
    },
    async add(batch, rows) {
      const partition = partitionOf(...key(batch));
      for (let i = 0; i < rows.length; i += STEP_ROWS) {
        const step = rows.slice(i, i + STEP_ROWS);
        addRows(batch, step);
        vectors.upsert(step.flatMap((s) => (s.vector ? [{ snippetId: s.id, partition, vector: s.vector }] : [])));
        await search.upkeep();
        await nextTurn();
      }
    },
    hold(batch) {
      const replaced = db
        .transaction(() => {
          const previous = db
            .prepare("SELECT library_id AS libraryId, version, batch, started_at AS startedAt FROM snippet_batches WHERE library_id = ? AND version = ? AND state = 'live'")
            .get(batch.libraryId, batch.version) as MirrorBatch | undefined;
          if (previous) db.prepare("UPDATE snippet_batches SET state = 'retired' WHERE library_id = ? AND version = ? AND batch = ?").run(...key(previous));
          db.prepare("UPDATE snippet_batches SET state = 'live' WHERE library_id = ? AND version = ? AND batch = ?").run(...key(batch));
          return previous;
        })
        .immediate();
      if (replaced) search.retire(replaced);
      return replaced;
    },
    async drop(batch, signal) {
      db.prepare("UPDATE snippet_batches SET state = 'retired' WHERE library_id = ? AND version = ? AND batch = ?").run(...key(batch));
      search.retire(batch);
      await dropBatch(...key(batch), signal);
    },
    async recover(all) {
      for (const b of batchesIn(all ? "" : "WHERE state <> 'live'")) await dropBatch(...key(b));
    },
    close() {
      search.close();
      db.close();
    },
  };
}

import type Database from "better-sqlite3";
import { LdsError } from "../../errors.js";
import type { JobLease, NewSnippet, RetiredChunk } from "../records.js";
import { leaseLost, requireVectorPerRow } from "../record-values.js";
import { holdsLease } from "./jobs.js";

/**
 * Snippet batches (schema 11): an ingestion writes a library version's new snippets as a batch of its own, in small
 * transactions that readers never see, then publishes it by switching one row. The batch it replaces is retired
 * and deleted afterwards, a chunk at a time. No transaction is ever as large as a library, so the server keeps
 * answering while 100,000 snippets are swapped, and the ingestion never holds a whole repository in memory.
 */

/** The batch readers see of a library version: the published one, or 0 (rows from before batches existed). */
export function liveBatch(db: Database.Database, libraryId: string, version: string): number {
  return publishedBatch(db, libraryId, version) ?? 0;
}

/** The batch last published for a library version; undefined before the first. */
function publishedBatch(db: Database.Database, libraryId: string, version: string): number | undefined {
  return liveBatchRecord(db, libraryId, version)?.batch;
}

/**
 * The live batch's record: its number and when it was started (a number can be handed out again once every row of
 * the batch that had it is gone, so the two name it). Undefined before the first publication.
 */
export function liveBatchRecord(db: Database.Database, libraryId: string, version: string): { batch: number; startedAt: string } | undefined {
  return db.prepare("SELECT batch, started_at AS startedAt FROM snippet_batches WHERE library_id = ? AND version = ? AND state = 'live'").get(libraryId, version) as
    { batch: number; startedAt: string } | undefined;
}

/**
 * When a batch that is written or served was started: undefined once it is retired (or never was). With its number
 * it names the batch (numbers can be handed out again); the search thread keys a batch's word index by both, so an
 * index built while the batch was being written (before its publication) is the one its searches find once live.
 */
export function servableBatchStart(db: Database.Database, libraryId: string, version: string, batch: number): string | undefined {
  return db.prepare("SELECT started_at FROM snippet_batches WHERE library_id = ? AND version = ? AND batch = ? AND state IN ('writing', 'live')").pluck().get(libraryId, version, batch) as string | undefined;
}

/** The versions ("" = current content) of which a library holds rows, in any batch. */
export function versionsWithRows(db: Database.Database, libraryId: string): string[] {
  return db.prepare("SELECT DISTINCT version FROM snippets WHERE library_id = ? ORDER BY version").pluck().all(libraryId) as string[];
}

/** SQL true for a row of `snippets s` that readers see (for queries over many library versions at once). */
export const LIVE_ROW = `s.batch = coalesce((SELECT b.batch FROM snippet_batches b
  WHERE b.library_id = s.library_id AND b.version = s.version AND b.state = 'live'), 0)`;

/**
 * Start a batch for a library version and answer its number. An unfinished batch of the same version (an ingestion
 * that crashed, or one still running that this one overtakes) is retired: the last one started wins.
 */
export function openBatch(db: Database.Database, libraryId: string, version: string): number {
  return db
    .transaction(() => {
      db.prepare("UPDATE snippet_batches SET state = 'retired' WHERE library_id = ? AND version = ? AND state = 'writing'").run(libraryId, version);
      // Numbers are never reused while rows of them may remain: a batch's record goes only after its last row.
      const next = db.prepare("SELECT coalesce(max(batch), 0) + 1 FROM snippet_batches").pluck().get() as number;
      db.prepare("INSERT INTO snippet_batches (library_id, version, batch, state, snippets, tokens) VALUES (?, ?, ?, 'writing', 0, 0)").run(libraryId, version, next);
      return next;
    })
    .immediate();
}

/**
 * Add snippets to an open batch in one transaction; answers their new ids (the search index takes them next, with
 * their vectors: `vectors` are only checked here, vectors.db keeps them).
 */
export function appendToBatch(db: Database.Database, libraryId: string, version: string, batch: number, rows: NewSnippet[], vectors?: Float32Array[]): number[] {
  requireVectorPerRow(rows.length, vectors);
  const insert = db.prepare(
    `INSERT INTO snippets (library_id, version, batch, kind, title, description, language, content, source_path, tokens, page_title)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return db
    .transaction(() => {
      requireWriting(db, libraryId, version, batch);
      const ids = rows.map((s) => Number(insert.run(libraryId, version, batch, s.kind, s.title, s.description, s.language, s.content, s.sourcePath, s.tokens, s.pageTitle).lastInsertRowid));
      // The batch's totals grow with it (schema 12), so that a library's are read, not counted, once it is live.
      db.prepare("UPDATE snippet_batches SET snippets = snippets + ?, tokens = tokens + ? WHERE library_id = ? AND version = ? AND batch = ?").run(
        rows.length,
        rows.reduce((sum, s) => sum + s.tokens, 0),
        libraryId,
        version,
        batch,
      );
      return ids;
    })
    .immediate();
}

/** Make a finished batch the one readers see, in one small transaction; the batch it replaces is retired. */
export function publishBatch(db: Database.Database, libraryId: string, version: string, batch: number, lease?: JobLease): void {
  db.transaction(() => {
    requireWriting(db, libraryId, version, batch);
    // Fenced by the job's holder, in the same transaction: a runner whose job was taken over publishes nothing.
    if (lease && !holdsLease(db, lease)) throw leaseLost(lease.jobId);
    const previous = publishedBatch(db, libraryId, version);
    if (previous !== undefined) {
      db.prepare("UPDATE snippet_batches SET state = 'retired' WHERE library_id = ? AND version = ? AND batch = ?").run(libraryId, version, previous);
    } else if (db.prepare("SELECT 1 FROM snippets WHERE library_id = ? AND version = ? AND batch = 0 LIMIT 1").get(libraryId, version)) {
      db.prepare("INSERT OR IGNORE INTO snippet_batches (library_id, version, batch, state) VALUES (?, ?, 0, 'retired')").run(libraryId, version);
    }
    db.prepare("UPDATE snippet_batches SET state = 'live' WHERE library_id = ? AND version = ? AND batch = ?").run(libraryId, version, batch);
  }).immediate();
}

/** Give up an unfinished batch (its ingestion failed): retired, so that its rows are deleted like a replaced batch's. */
export function discardBatch(db: Database.Database, libraryId: string, version: string, batch: number): void {
  db.prepare("UPDATE snippet_batches SET state = 'retired' WHERE library_id = ? AND version = ? AND batch = ? AND state = 'writing'").run(libraryId, version, batch);
}

/**
 * Retire every unfinished batch (at a server's start). Only when no other process can be writing one: a shared
 * database (issue 34) uses leases instead.
 */
export function retireUnfinishedAsSoleWriter(db: Database.Database): number {
  return db.prepare("UPDATE snippet_batches SET state = 'retired' WHERE state = 'writing'").run().changes;
}

/**
 * Retire the unfinished batches of library versions no running job holds a live lease on (a shared database's
 * start, where other processes may be writing theirs): the ingestion that wrote them is gone.
 */
export function retireAbandonedBatches(db: Database.Database): number {
  return db
    .prepare(
      `UPDATE snippet_batches SET state = 'retired' WHERE state = 'writing' AND NOT EXISTS (
         SELECT 1 FROM jobs j WHERE j.state = 'running' AND j.library_id = snippet_batches.library_id
           AND coalesce(json_extract(j.payload, '$.version'), '') = snippet_batches.version
           AND j.lease_until >= strftime('%Y-%m-%dT%H:%M:%fZ','now'))`,
    )
    .run().changes;
}

/** Up to `limit` snippet ids of one retired batch; a retired batch with no rows left is forgotten on the way. */
export function retiredChunk(db: Database.Database, limit: number): RetiredChunk | undefined {
  const next = db.prepare("SELECT library_id AS libraryId, version, batch FROM snippet_batches WHERE state = 'retired' LIMIT 1");
  const ids = db.prepare("SELECT id FROM snippets WHERE library_id = ? AND version = ? AND batch = ? LIMIT ?").pluck();
  for (;;) {
    const found = next.get() as { libraryId: string; version: string; batch: number } | undefined;
    if (!found) return undefined;
    const chunk = ids.all(found.libraryId, found.version, found.batch, limit) as number[];
    if (chunk.length) return { ...found, ids: chunk };
    db.prepare("DELETE FROM snippet_batches WHERE library_id = ? AND version = ? AND batch = ? AND state = 'retired'").run(found.libraryId, found.version, found.batch);
  }
}

/** Delete these rows of a retired batch (their vectors were removed first: a vector without its row is invisible). */
export function deleteRetiredRows(db: Database.Database, libraryId: string, version: string, batch: number, ids: number[]): void {
  const remove = db.prepare("DELETE FROM snippets WHERE id = ? AND library_id = ? AND version = ? AND batch = ?");
  db.transaction(() => {
    // Only while the batch is still retired: a live or writing batch's rows are never deleted here.
    if (!db.prepare("SELECT 1 FROM snippet_batches WHERE library_id = ? AND version = ? AND batch = ? AND state = 'retired'").get(libraryId, version, batch)) return;
    for (const id of ids) remove.run(id, libraryId, version, batch);
  }).immediate();
}

function requireWriting(db: Database.Database, libraryId: string, version: string, batch: number): void {
  const state = db.prepare("SELECT state FROM snippet_batches WHERE library_id = ? AND version = ? AND batch = ?").pluck().get(libraryId, version, batch);
  if (state !== "writing") {
    const name = version ? `${libraryId} (version ${version})` : libraryId;
    throw new LdsError("ingestion_superseded", `Another ingestion of ${name} started after this one and replaces it; this one stopped without changing what is served.`, {
      hint: "Nothing to do: the newer ingestion's result is served when it finishes. Check the library's state to see it.",
    });
  }
}

import { LdsError } from "../../errors.js";
import type { JobLease, NewSnippet, RetiredChunk } from "../records.js";
import { leaseLost, requireVectorPerRow } from "../record-values.js";
import { notifyBatchChange } from "./batch-notices.js";
import { holdsLease } from "./job-leases.js";
import { vectorsSideBySide } from "./vector-bytes.js";
import type { PgContext, Sql } from "./sql.js";

/**
 * Snippet batches, as the SQLite engine keeps them (store/sqlite/snippet-batches.ts): an ingestion writes a library
 * version's new snippets as a batch readers do not see, in small transactions, then publishes it by switching one
 * row; the batch it replaces is retired and deleted a chunk at a time. Replicas share the table, so the batch row is
 * locked (FOR UPDATE) by every write that depends on its state: a retirement by another replica waits for an append
 * under way, and the append after it finds the batch retired.
 */

/**
 * Batches are opened one at a time across replicas, under this transaction-level lock (numbers are max + 1). Its own
 * number: under the backups' (0x4c445303, engine/postgres/serving-lock.ts) every opening waited for a backup to end.
 */
const BATCH_LOCK = 0x4c445305;

/** The batch readers see of a library version: the published one, or 0 (rows from before batches existed). */
export async function liveBatch(sql: Sql, libraryId: string, version: string): Promise<number> {
  return (await sql.row<{ batch: number }>("SELECT batch FROM snippet_batches WHERE library_id = $1 AND version = $2 AND state = 'live'", [libraryId, version]))?.batch ?? 0;
}

/** Start a batch and answer its number; an unfinished batch of the same version is retired (the last one started wins). */
export function openBatch({ transaction }: PgContext, libraryId: string, version: string): Promise<number> {
  return transaction(async (tx) => {
    // Openings wait for one another from here (across replicas), so that the retirement below sees a batch opened
    // a moment ago elsewhere: two ingestions of a version started at once leave one batch writing, not two.
    await tx.run("SELECT pg_advisory_xact_lock($1)", [BATCH_LOCK]);
    await tx.run("UPDATE snippet_batches SET state = 'retired' WHERE library_id = $1 AND version = $2 AND state = 'writing'", [libraryId, version]);
    const next = (await tx.row<{ next: number }>("SELECT coalesce(max(batch), 0) + 1 AS next FROM snippet_batches"))!.next;
    await tx.run("INSERT INTO snippet_batches (library_id, version, batch, state, snippets, tokens) VALUES ($1, $2, $3, 'writing', 0, 0)", [libraryId, version, next]);
    return next;
  });
}

/**
 * Add rows to an open batch in one transaction, with their vectors when given (`snippet_vectors`, float32
 * little-endian: replicas derive their search files from them); answers their ids in the order of `rows`.
 */
export async function appendToBatch({ transaction }: PgContext, libraryId: string, version: string, batch: number, rows: NewSnippet[], vectors?: Float32Array[]): Promise<number[]> {
  requireVectorPerRow(rows.length, vectors);
  return transaction(async (tx) => {
    await requireWriting(tx, libraryId, version, batch);
    if (rows.length === 0) return [];
    // No wait for the disk at this commit (5-6 ms a chunk): a batch is served only once published, and the
    // publication's commit waits for the log to be flushed up to it, which holds every chunk written before it. A
    // crash loses at most chunks of a batch still being written, which is never served and is retired.
    await tx.run("SET LOCAL synchronous_commit = off");
    // One statement for the chunk. Identity values are drawn as rows are inserted, in the ORDER BY of the
    // ordinality: sorted, the returned ids are the rows' in the order given.
    const inserted = await tx.rows<{ id: number }>(
      `INSERT INTO snippets (library_id, version, batch, kind, title, description, language, content, source_path, tokens, page_title)
       SELECT $1, $2, $3, r.kind, r.title, r.description, r.language, r.content, r.source_path, r.tokens, r.page_title
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::integer[], $11::text[])
         WITH ORDINALITY AS r(kind, title, description, language, content, source_path, tokens, page_title, n)
       ORDER BY r.n
       RETURNING id`,
      [
        libraryId,
        version,
        batch,
        rows.map((s) => s.kind),
        rows.map((s) => s.title),
        rows.map((s) => s.description),
        rows.map((s) => s.language),
        rows.map((s) => s.content),
        rows.map((s) => s.sourcePath),
        rows.map((s) => s.tokens),
        rows.map((s) => s.pageTitle),
      ],
    );
    // The batch's totals grow with it, so that a library's are read, not counted, once it is live.
    await tx.run("UPDATE snippet_batches SET snippets = snippets + $1, tokens = tokens + $2 WHERE library_id = $3 AND version = $4 AND batch = $5", [
      rows.length,
      rows.reduce((sum, s) => sum + s.tokens, 0),
      libraryId,
      version,
      batch,
    ]);
    const ids = inserted.map((r) => r.id).sort((a, b) => a - b);
    if (vectors) {
      // The chunk's vectors as one binary parameter, cut apart in the statement: as a bytea[] they travelled as hex
      // text, which PostgreSQL took longer to parse (17 ms a chunk of 250) than to insert the rows (bench/pg-serve.js).
      const { bytes, width } = vectorsSideBySide(vectors);
      await tx.run(
        `INSERT INTO snippet_vectors (snippet_id, vector)
         SELECT t.id, substring($2::bytea FROM ((t.n - 1) * $3::integer + 1)::integer FOR $3::integer) FROM unnest($1::bigint[]) WITH ORDINALITY AS t(id, n)`,
        [ids, bytes, width],
      );
    }
    return ids;
  });
}

/** Make a finished batch the one readers see, in one small transaction; the batch it replaces is retired. */
export function publishBatch({ transaction }: PgContext, libraryId: string, version: string, batch: number, lease?: JobLease): Promise<void> {
  return transaction(async (tx) => {
    await requireWriting(tx, libraryId, version, batch);
    // Fenced by the job's holder, in the same transaction: a runner whose job was taken over publishes nothing.
    if (lease && !(await holdsLease(tx, lease))) throw leaseLost(lease.jobId);
    const previous = await tx.row<{ batch: number }>("SELECT batch FROM snippet_batches WHERE library_id = $1 AND version = $2 AND state = 'live' FOR UPDATE", [libraryId, version]);
    if (previous) {
      await tx.run("UPDATE snippet_batches SET state = 'retired' WHERE library_id = $1 AND version = $2 AND batch = $3", [libraryId, version, previous.batch]);
    } else if (await tx.row("SELECT 1 FROM snippets WHERE library_id = $1 AND version = $2 AND batch = 0 LIMIT 1", [libraryId, version])) {
      // Rows from before batches are retired like a replaced batch.
      await tx.run("INSERT INTO snippet_batches (library_id, version, batch, state) VALUES ($1, $2, 0, 'retired') ON CONFLICT DO NOTHING", [libraryId, version]);
    }
    await tx.run("UPDATE snippet_batches SET state = 'live' WHERE library_id = $1 AND version = $2 AND batch = $3", [libraryId, version, batch]);
    // Delivered at commit: replicas fetch this batch into their search files and drop the one it replaced.
    await notifyBatchChange(tx, { library: libraryId, version, batch, event: "published" });
  });
}

/** Give up an unfinished batch (its ingestion failed): retired, so that its rows are deleted like a replaced batch's. */
export async function discardBatch(sql: Sql, libraryId: string, version: string, batch: number): Promise<void> {
  await sql.run("UPDATE snippet_batches SET state = 'retired' WHERE library_id = $1 AND version = $2 AND batch = $3 AND state = 'writing'", [libraryId, version, batch]);
}

/** Up to `limit` snippet ids of one retired batch; a retired batch with no rows left is forgotten on the way. */
export async function retiredChunk(sql: Sql, limit: number): Promise<RetiredChunk | undefined> {
  for (;;) {
    const found = await sql.row<{ libraryId: string; version: string; batch: number }>(
      `SELECT library_id AS "libraryId", version, batch FROM snippet_batches WHERE state = 'retired' ORDER BY library_id COLLATE "C", version COLLATE "C", batch LIMIT 1`,
    );
    if (!found) return undefined;
    const ids = await sql.rows<{ id: number }>("SELECT id FROM snippets WHERE library_id = $1 AND version = $2 AND batch = $3 ORDER BY id LIMIT $4", [found.libraryId, found.version, found.batch, limit]);
    if (ids.length) return { ...found, ids: ids.map((r) => r.id) };
    await sql.run("DELETE FROM snippet_batches WHERE library_id = $1 AND version = $2 AND batch = $3 AND state = 'retired'", [found.libraryId, found.version, found.batch]);
  }
}

/** Delete these rows of a retired batch (their search entries were removed first), only while it is still retired. */
export function deleteRetiredRows({ transaction }: PgContext, chunk: RetiredChunk): Promise<void> {
  return transaction(async (tx) => {
    const retired = await tx.row("SELECT 1 FROM snippet_batches WHERE library_id = $1 AND version = $2 AND batch = $3 AND state = 'retired' FOR SHARE", [chunk.libraryId, chunk.version, chunk.batch]);
    if (!retired) return;
    await tx.run("DELETE FROM snippets WHERE id = ANY($1::bigint[]) AND library_id = $2 AND version = $3 AND batch = $4", [chunk.ids, chunk.libraryId, chunk.version, chunk.batch]);
  });
}

/** ingestion_superseded unless the batch is being written; the batch's row stays locked until the transaction ends. */
async function requireWriting(tx: Sql, libraryId: string, version: string, batch: number): Promise<void> {
  const row = await tx.row<{ state: string }>("SELECT state FROM snippet_batches WHERE library_id = $1 AND version = $2 AND batch = $3 FOR UPDATE", [libraryId, version, batch]);
  if (row?.state !== "writing") {
    const name = version ? `${libraryId} (version ${version})` : libraryId;
    throw new LdsError("ingestion_superseded", `Another ingestion of ${name} started after this one and replaces it; this one stopped without changing what is served.`, {
      hint: "Nothing to do: the newer ingestion's result is served when it finishes. Check the library's state to see it.",
    });
  }
}

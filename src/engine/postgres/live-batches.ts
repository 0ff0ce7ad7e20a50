import type pg from "pg";
import type { MirrorBatch, MirrorSnippet } from "../sqlite/search-mirror-files.js";
import { bytesToVector } from "../../store/postgres/vector-bytes.js";
import { translateError } from "../../store/postgres/pool.js";

/**
 * What a replica's follower reads of PostgreSQL's snippet batches: which are live, and a live batch's rows with their
 * vectors, a chunk at a time. Errors as the store reports them (database_unreachable, timeout).
 */

/** Rows fetched per query when a batch is copied: with their vectors, about 2-5 MB, whatever the batch's size. */
export const FETCH_CHUNK = 500;

type Endpoint = { host: string; port: number };

async function query<R extends pg.QueryResultRow>(pool: pg.Pool, endpoint: Endpoint, text: string, params: unknown[] = []): Promise<R[]> {
  try {
    return (await pool.query<R>(text, params)).rows;
  } catch (err) {
    throw translateError(err, endpoint);
  }
}

/**
 * Every live batch: the published ones, and batch 0 of a library version whose rows are from before batches (a
 * database restored from an old archive) and that nothing replaced. Its start is "" (it has no record).
 */
export function liveBatches(pool: pg.Pool, endpoint: Endpoint): Promise<MirrorBatch[]> {
  return query<MirrorBatch>(
    pool,
    endpoint,
    `SELECT library_id AS "libraryId", version, batch, started_at AS "startedAt" FROM snippet_batches WHERE state = 'live'
     UNION ALL
     SELECT s.library_id, s.version, 0, '' FROM snippets s WHERE s.batch = 0
       AND NOT EXISTS (SELECT 1 FROM snippet_batches b WHERE b.library_id = s.library_id AND b.version = s.version AND (b.state = 'live' OR b.batch = 0))
     GROUP BY s.library_id, s.version`,
  );
}

/** This batch as it is live now (undefined when it is not: replaced, removed, or never published). */
export async function liveBatch(pool: pg.Pool, endpoint: Endpoint, libraryId: string, version: string, batch: number): Promise<MirrorBatch | undefined> {
  if (batch === 0) {
    const rows = await query<{ live: boolean }>(
      pool,
      endpoint,
      `SELECT EXISTS (SELECT 1 FROM snippets WHERE library_id = $1 AND version = $2 AND batch = 0)
         AND NOT EXISTS (SELECT 1 FROM snippet_batches WHERE library_id = $1 AND version = $2 AND (state = 'live' OR batch = 0)) AS live`,
      [libraryId, version],
    );
    return rows[0]?.live ? { libraryId, version, batch: 0, startedAt: "" } : undefined;
  }
  const rows = await query<MirrorBatch>(
    pool,
    endpoint,
    `SELECT library_id AS "libraryId", version, batch, started_at AS "startedAt" FROM snippet_batches WHERE library_id = $1 AND version = $2 AND batch = $3 AND state = 'live'`,
    [libraryId, version, batch],
  );
  return rows[0];
}

/**
 * A batch's rows with their vectors, in chunks by id (each chunk one query: nothing held open between them, memory
 * bounded by the chunk). A row without a vector (written without one) comes with `vector` undefined.
 */
export async function* batchRows(pool: pg.Pool, endpoint: Endpoint, batch: MirrorBatch): AsyncIterable<Array<MirrorSnippet>> {
  for (let after = 0; ;) {
    const rows = await query<MirrorSnippet & { bytes: Buffer | null }>(
      pool,
      endpoint,
      `SELECT s.id, s.kind, s.title, s.description, s.language, s.content, s.source_path AS "sourcePath", s.tokens, s.page_title AS "pageTitle", v.vector AS bytes
       FROM snippets s LEFT JOIN snippet_vectors v ON v.snippet_id = s.id
       WHERE s.library_id = $1 AND s.version = $2 AND s.batch = $3 AND s.id > $4 ORDER BY s.id LIMIT $5`,
      [batch.libraryId, batch.version, batch.batch, after, FETCH_CHUNK],
    );
    if (rows.length === 0) return;
    // bigint ids as numbers whatever the pool's parsers (the store's pool parses them so already).
    yield rows.map(({ bytes, ...row }) => ({ ...row, id: Number(row.id), vector: bytes ? bytesToVector(bytes) : undefined }));
    after = Number(rows[rows.length - 1]!.id);
  }
}

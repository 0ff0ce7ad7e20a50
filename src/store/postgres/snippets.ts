import type { EmbeddableSnippet, SnippetTotals, StoredSnippet } from "../records.js";
import type { SnippetStore } from "../store.js";
import { appendToBatch, deleteRetiredRows, discardBatch, liveBatch, openBatch, publishBatch, retiredChunk } from "./snippet-batches.js";
import { retireAbandonedBatches } from "./job-leases.js";
import type { PgContext } from "./sql.js";

/**
 * The live batch of the library version given as $1 and $2, inside the statement that reads its rows: one round trip
 * (a context answer's load is on the hot path), and the batch and its rows are read from one snapshot.
 */
const LIVE_BATCH = "coalesce((SELECT b.batch FROM snippet_batches b WHERE b.library_id = $1 AND b.version = $2 AND b.state = 'live'), 0)";

/** The snippets group: reads of the live batch (as the SQLite engine serves them) and the batches' writes. */
export function snippetStore(context: PgContext): SnippetStore {
  const { sql } = context;
  return {
    count: async (libraryId, version = "", kind) => {
      const byKind = kind ? " AND kind = $3" : "";
      const params = kind ? [libraryId, version, kind] : [libraryId, version];
      return (await sql.row<{ n: number }>(`SELECT count(*) AS n FROM snippets WHERE library_id = $1 AND version = $2 AND batch = ${LIVE_BATCH}${byKind}`, params))!.n;
    },
    // Kept with the live batch's record (added up as its chunks were written); counted only for rows from before
    // batches (batch 0), whose totals nothing kept.
    totals: async (libraryId) => {
      const kept = await sql.row<SnippetTotals>("SELECT snippets AS n, tokens FROM snippet_batches WHERE library_id = $1 AND version = '' AND state = 'live' AND snippets IS NOT NULL", [libraryId]);
      if (kept) return kept;
      const batch = await liveBatch(sql, libraryId, "");
      return (await sql.row<SnippetTotals>("SELECT count(*) AS n, coalesce(sum(tokens), 0) AS tokens FROM snippets WHERE library_id = $1 AND version = '' AND batch = $2", [libraryId, batch]))!;
    },
    countAll: async () => (await sql.row<{ n: number }>("SELECT count(*) AS n FROM snippets"))!.n,
    // One round trip for all the ids, then in the order asked; ids no longer served are left out.
    load: async (libraryId, version, ids) => {
      if (ids.length === 0) return [];
      const rows = await sql.rows<StoredSnippet>(
        `SELECT id, kind, title, description, language, content, source_path AS "sourcePath", page_title AS "pageTitle"
         FROM snippets WHERE library_id = $1 AND version = $2 AND batch = ${LIVE_BATCH} AND id = ANY($3::bigint[])`,
        [libraryId, version, ids],
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id)).filter((row): row is StoredSnippet => row !== undefined);
    },
    pages: (size) => snippetPages(context, size),
    versions: async (libraryId) => (await sql.rows<{ version: string }>('SELECT version FROM snippets WHERE library_id = $1 GROUP BY version ORDER BY version COLLATE "C"', [libraryId])).map((r) => r.version),
    liveBatch: (libraryId, version) => liveBatch(sql, libraryId, version),
    openBatch: (libraryId, version) => openBatch(context, libraryId, version),
    appendToBatch: (libraryId, version, batch, rows, vectors) => appendToBatch(context, libraryId, version, batch, rows, vectors),
    publishBatch: (libraryId, version, batch, lease) => publishBatch(context, libraryId, version, batch, lease),
    discardBatch: (libraryId, version, batch) => discardBatch(sql, libraryId, version, batch),
    retireUnfinishedAsSoleWriter: () => sql.run("UPDATE snippet_batches SET state = 'retired' WHERE state = 'writing'"),
    retireAbandonedBatches: () => retireAbandonedBatches(sql),
    retiredChunk: (limit) => retiredChunk(sql, limit),
    deleteRetiredRows: (chunk) => deleteRetiredRows(context, chunk),
  };
}

/** Every snippet in pages of `size` by id (keyset pagination: each page one query, none held open between pages). */
async function* snippetPages({ sql }: PgContext, size: number): AsyncIterable<EmbeddableSnippet[]> {
  for (let after = 0; ;) {
    const rows = await sql.rows<EmbeddableSnippet>('SELECT id, library_id AS "libraryId", version, batch, title, description, content FROM snippets WHERE id > $1 ORDER BY id LIMIT $2', [after, size]);
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.id;
  }
}

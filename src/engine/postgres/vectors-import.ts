import { once } from "node:events";
import { from as copyFrom } from "pg-copy-streams";
import { readStagedVectors, type StoredVector } from "../sqlite/staged-copies.js";
import { usableVectorsLabel } from "../sqlite/vectors-file-writer.js";
import type { CopyConnection } from "./copy-connection.js";
import { copyTextLine } from "./copy-text.js";
import { ident } from "./records-catalog.js";
import { UNKNOWN_VECTORS_EMBEDDER, VECTORS_EMBEDDER_SETTING, sameEmbedder, vectorsEmbedderValue, type VectorsEmbedder } from "./vectors-embedder.js";

/** Vectors written to the COPY stream at once: bounded memory, few writes. */
const VECTORS_PER_WRITE = 500;

/**
 * An archive's vectors (its vectors/ file, read by the SQLite engine) into `schema`'s snippet_vectors, as float32
 * bytes (the form store/postgres writes, vector-bytes.ts), inside the import's transaction. The archive copies its
 * vectors before its records, so a vector may name a snippet the records no longer hold: they go through a
 * temporary table and only those of a snippet of the schema are kept. Answers the vectors kept.
 */
export async function importVectors(connection: CopyConnection, schema: string, vectors: Iterable<StoredVector>): Promise<number> {
  const { client, sql } = connection;
  await sql.run("CREATE TEMPORARY TABLE restored_vectors (snippet_id bigint NOT NULL, vector bytea NOT NULL) ON COMMIT DROP");
  const stream = client.query(copyFrom("COPY restored_vectors (snippet_id, vector) FROM STDIN"));
  const finished = new Promise<void>((resolve, reject) => {
    stream.on("finish", resolve);
    stream.on("error", reject);
  });
  finished.catch(() => {});
  let lines: string[] = [];
  const flush = async () => {
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    if (!stream.write(text)) await Promise.race([once(stream, "drain"), finished]);
  };
  try {
    for (const { snippetId, vector } of vectors) {
      lines.push(copyTextLine([snippetId, vector]));
      if (lines.length >= VECTORS_PER_WRITE) await flush();
    }
    await flush();
    stream.end();
    await finished;
  } catch (err) {
    stream.destroy();
    await finished.catch(() => {});
    throw err;
  }
  const kept = await sql.run(
    `INSERT INTO ${ident(schema)}.snippet_vectors (snippet_id, vector)
       SELECT v.snippet_id, v.vector FROM restored_vectors v JOIN ${ident(schema)}.snippets s ON s.id = v.snippet_id
     ON CONFLICT (snippet_id) DO NOTHING`,
  );
  await sql.run(`ANALYZE ${ident(schema)}.snippet_vectors`);
  return kept;
}

/** What a restore did with an archive's vectors: those kept, or why none were imported. */
export interface ArchiveVectorsImport {
  kept: number;
  /** Set when the archive's vectors were left out: what made them, and what happens instead. */
  skipped?: string;
}

/**
 * An archive's vectors into `schema` only when the embedder they are labelled with is the one the database records
 * (`recorded`, read from the live schema before the import: its replicas' embedder), or, for a database that records
 * none, when their label is a real embedder's (and then `schema` records it). Otherwise none are imported (a vector
 * of another embedder would rank nonsense, or not fit the replicas' vector tables) and `skipped` says so. `schema`
 * ends up recording the embedder of the vectors it may hold: the database's, else the imported ones', else none (the
 * archive's own settings may carry its source database's record).
 */
export async function importArchiveVectors(connection: CopyConnection, schema: string, vectorsFile: string, recorded: VectorsEmbedder | undefined): Promise<ArchiveVectorsImport> {
  const found = usableVectorsLabel(vectorsFile);
  const label = found && found.id !== UNKNOWN_VECTORS_EMBEDDER ? found : undefined;
  const fits = label !== undefined && (recorded === undefined || sameEmbedder(label, recorded));
  const maker = recorded ?? label;
  if (maker) {
    await connection.sql.run(`INSERT INTO ${ident(schema)}.settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [
      VECTORS_EMBEDDER_SETTING,
      vectorsEmbedderValue(maker),
    ]);
  } else {
    await connection.sql.run(`DELETE FROM ${ident(schema)}.settings WHERE key = $1`, [VECTORS_EMBEDDER_SETTING]);
  }
  if (!fits) {
    const made = label ? `by ${label.id} (${label.dimensions} dimensions)` : "by an unknown or unfinished embedding";
    const wanted = recorded ? `the database's embedder is ${recorded.id} (${recorded.dimensions} dimensions)` : "the database records no embedder";
    return { kept: 0, skipped: `the archive's vectors were made ${made} and ${wanted}: none were imported, so the restored snippets are found by their words alone until their libraries are indexed again` };
  }
  return { kept: await importVectors(connection, schema, readStagedVectors(vectorsFile)) };
}

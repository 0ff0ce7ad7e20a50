import { once } from "node:events";
import { from as copyFrom } from "pg-copy-streams";
import type { StoredVector } from "../sqlite/staged-copies.js";
import type { CopyConnection } from "./copy-connection.js";
import { copyTextLine } from "./copy-text.js";
import { ident } from "./records-catalog.js";

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

import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { LdsError, fromSystemError } from "../errors.js";

export interface VectorMatch {
  snippetId: number;
  distance: number;
}

export interface VectorIndex {
  readonly db: Database.Database;
  readonly dimensions: number;
  upsert(items: Array<{ snippetId: number; vector: Float32Array }>): void;
  remove(snippetIds: number[]): void;
  nearest(vector: Float32Array, k: number): VectorMatch[];
  count(): number;
  close(): void;
}

/** Load sqlite-vec into a connection (needed to read the vec0 tables, including in a snapshot being verified). */
export function loadVectorExtension(db: Database.Database): void {
  sqliteVec.load(db);
}

/**
 * Open vectors.db: one vec0 table keyed by snippet id. The dimension count is recorded in the file and checked,
 * because vectors of another embedder cannot be compared with those already stored.
 */
export function openVectorIndex(file: string, dimensions: number): VectorIndex {
  let db: Database.Database;
  try {
    db = new Database(file);
  } catch (err) {
    throw fromSystemError(err, file);
  }
  loadVectorExtension(db);
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const stored = db.prepare("SELECT value FROM vector_meta WHERE key = 'dimensions'").pluck().get() as string | undefined;
  if (stored === undefined) {
    db.transaction(() => {
      db.exec(`CREATE VIRTUAL TABLE vec_snippets USING vec0(
        snippet_id INTEGER PRIMARY KEY, embedding float[${dimensions}] distance_metric=cosine)`);
      db.prepare("INSERT INTO vector_meta (key, value) VALUES ('dimensions', ?)").run(String(dimensions));
    })();
  } else if (Number(stored) !== dimensions) {
    db.close();
    throw new LdsError("data_dir_invalid", `${file} holds ${stored}-dimension vectors, the embedder makes ${dimensions}.`, {
      hint: "Use the embedder the index was built with, or delete vectors.db and re-index (it is rebuildable).",
    });
  }

  const insert = db.prepare("INSERT INTO vec_snippets (snippet_id, embedding) VALUES (?, ?)");
  const del = db.prepare("DELETE FROM vec_snippets WHERE snippet_id = ?");
  const knn = db.prepare("SELECT snippet_id, distance FROM vec_snippets WHERE embedding MATCH ? AND k = ?");
  const asBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

  return {
    db,
    dimensions,
    upsert: db.transaction((items: Array<{ snippetId: number; vector: Float32Array }>) => {
      // vec0 has no UPSERT: delete then insert, inside one transaction.
      for (const { snippetId, vector } of items) {
        del.run(BigInt(snippetId));
        insert.run(BigInt(snippetId), asBlob(vector));
      }
    }),
    remove: db.transaction((ids: number[]) => {
      for (const id of ids) del.run(BigInt(id));
    }),
    nearest(vector, k) {
      return (knn.all(asBlob(vector), k) as Array<{ snippet_id: number; distance: number }>).map((row) => ({
        snippetId: Number(row.snippet_id),
        distance: row.distance,
      }));
    },
    count() {
      return db.prepare("SELECT count(*) FROM vec_snippets").pluck().get() as number;
    },
    close() {
      db.close();
    },
  };
}

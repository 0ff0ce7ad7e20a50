import Database from "better-sqlite3";
import { fromSystemError } from "../../errors.js";
import { loadVectorExtension } from "../../index/sqlite/vector-index.js";
import { migrate } from "./migrate.js";
import { MIGRATIONS } from "./migrations.js";
import { openReadOnly } from "./open-read-only.js";

/**
 * A restored archive's staged lds.db brought to schema `target` (another engine's newest version), as an open would
 * migrate it: an archive of an older release is copied into that engine at a version its schema has.
 */
export function migrateStagedRecords(file: string, target: number): { from: number; to: number } {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    throw fromSystemError(err, file);
  }
  try {
    return migrate(db, MIGRATIONS, target);
  } finally {
    db.close();
  }
}

/** A snippet's embedding as the vector index stores it: float32 values, little-endian. */
export interface StoredVector {
  snippetId: number;
  vector: Buffer;
}

/**
 * The vectors of a staged vectors.db, one at a time by snippet id (never the whole index in memory), for an engine
 * that keeps them with the records. A file without the vector table (never built) has none.
 */
export function* readStagedVectors(file: string): Generator<StoredVector> {
  const db = openReadOnly(file);
  try {
    loadVectorExtension(db);
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_snippets'").get();
    if (!table) return;
    const rows = db.prepare("SELECT snippet_id, embedding FROM vec_snippets ORDER BY snippet_id").raw().iterate() as IterableIterator<[number | bigint, Buffer]>;
    for (const [snippetId, vector] of rows) yield { snippetId: Number(snippetId), vector };
  } finally {
    db.close();
  }
}

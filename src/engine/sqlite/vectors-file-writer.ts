import fs from "node:fs";
import { LdsError, fromSystemError } from "../../errors.js";
import { openVectorIndex, partitionOf, type VectorIndex } from "../../index/sqlite/vector-index.js";
import { openReadOnly } from "./open-read-only.js";

/** A vector of a snippet, with the snippet's library version and batch (its partition in the index). */
export interface SnippetVector {
  snippetId: number;
  libraryId: string;
  version: string;
  batch: number;
  vector: Float32Array;
}

/** A fresh vectors.db being filled with another engine's vectors (PostgreSQL's snippet_vectors rows). */
export interface VectorsFileWriter {
  add(rows: SnippetVector[]): void;
  /** Record the index complete and close it as an archive holds one (no journal beside it). */
  finish(): void;
  /** Close and remove the file: a half-filled copy is never left behind. */
  abort(): void;
}

/**
 * Create an empty vector index at `file` for `embedder`, by the SQLite engine's own code (index/sqlite/vector-index.ts),
 * so that it is exactly the file a SQLite volume's vectors.db is: same layout, partitions and meta. The file must not
 * exist; it is made 0600 before anything is written into it.
 */
export function createVectorsFile(file: string, embedder: { id: string; dimensions: number }): VectorsFileWriter {
  try {
    fs.writeFileSync(file, "", { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST")
      throw new LdsError("validation_error", `${file} already exists: a copy of the vectors is written to a new file only.`, { hint: "Choose a path that does not exist yet." });
    throw fromSystemError(err, file);
  }
  const remove = () => {
    for (const suffix of ["", "-journal", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  };
  let index: VectorIndex;
  try {
    index = openVectorIndex(file, embedder);
  } catch (err) {
    remove();
    throw err;
  }
  return {
    add(rows) {
      index.upsert(rows.map((r) => ({ snippetId: r.snippetId, partition: partitionOf(r.libraryId, r.version, r.batch), vector: r.vector })));
    },
    finish() {
      index.markComplete();
      // As the SQLite engine's copies are (engine/sqlite/copy-database.ts): one self-contained file.
      index.db.pragma("journal_mode = DELETE");
      index.close();
    },
    abort() {
      if (index.db.open) index.close();
      remove();
    },
  };
}

/**
 * The embedder an archive's vectors.db says made its vectors, when the SQLite engine would use them as they are (its
 * layout, the table complete: the vector index's own check, which a SQLite restore relies on to rebuild the others);
 * undefined for a file that must be rebuilt (unknown maker, older layout, unfinished, no meta).
 */
export function usableVectorsLabel(file: string): { id: string; dimensions: number } | undefined {
  let label: { id: string; dimensions: number } | undefined;
  const db = openReadOnly(file);
  try {
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vector_meta'").get()) return undefined;
    const meta = new Map((db.prepare("SELECT key, value FROM vector_meta").all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]));
    const id = meta.get("embedder");
    const dimensions = Number(meta.get("dimensions"));
    if (id !== undefined && Number.isInteger(dimensions) && dimensions > 0) label = { id, dimensions };
  } finally {
    db.close();
  }
  if (!label) return undefined;
  const index = openVectorIndex(file, label);
  try {
    return index.stale ? undefined : label;
  } finally {
    index.close();
  }
}

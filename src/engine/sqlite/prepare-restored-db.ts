import Database from "better-sqlite3";
import { requeueAfterRestore } from "../../store/sqlite/jobs.js";
import { loadVectorExtension } from "../../index/sqlite/vector-index.js";

/**
 * Make the verified snapshots ready to serve, before they replace anything: switch WAL back on (the snapshot is
 * in journal_mode=delete) and queue the libraries that were mid-indexing at snapshot time for re-indexing.
 * Migrations are not run here: the server runs them at its next start, as for any older database.
 */
export function prepareRestoredDatabases(dbFile: string, vectorsFile: string, partial: string[]): string[] {
  const db = new Database(dbFile);
  let requeued: string[];
  try {
    db.pragma("journal_mode = WAL");
    requeued = requeueAfterRestore(db, partial);
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  const vectors = new Database(vectorsFile);
  try {
    loadVectorExtension(vectors);
    vectors.pragma("journal_mode = WAL");
  } finally {
    vectors.close();
  }
  // Made durable by the restore with every other staged file, before its point of no return.
  return requeued;
}

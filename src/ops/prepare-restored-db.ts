import Database from "better-sqlite3";
import { fsyncFile } from "../util/files.js";
import { loadVectorExtension } from "../vectors/vector-index.js";

/**
 * Make the verified snapshots ready to serve, before they replace anything: switch WAL back on (VACUUM INTO
 * writes journal_mode=delete) and queue the libraries that were mid-indexing at snapshot time for re-indexing.
 * Migrations are not run here: the server runs them at its next start, as for any older database.
 */
export function prepareRestoredDatabases(dbFile: string, vectorsFile: string, partial: string[]): string[] {
  const db = new Database(dbFile);
  let requeued: string[] = [];
  try {
    db.pragma("journal_mode = WAL");
    requeued = requeuePartialLibraries(db, partial);
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
  fsyncFile(dbFile);
  fsyncFile(vectorsFile);
  return requeued;
}

function requeuePartialLibraries(db: Database.Database, partial: string[]): string[] {
  const hasJobs = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs'").get();
  if (!hasJobs || partial.length === 0) return [];
  const markLibrary = db.prepare(
    `UPDATE libraries SET state = 'queued', state_reason = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')
     WHERE id = ?`,
  );
  const hasQueuedJob = db.prepare("SELECT 1 FROM jobs WHERE library_id = ? AND state = 'queued'");
  const queueJob = db.prepare(
    `INSERT INTO jobs (library_id, kind, state, payload) VALUES (?, 'refresh', 'queued', '{"reason":"restore"}')`,
  );
  const requeued: string[] = [];
  db.transaction(() => {
    // A job that was running when the snapshot was taken never finished: run it again.
    db.prepare("UPDATE jobs SET state = 'queued' WHERE state = 'running'").run();
    for (const id of partial) {
      if (markLibrary.run("Being indexed when the backup was taken; re-indexing after restore.", id).changes === 0) continue;
      if (!hasQueuedJob.get(id)) queueJob.run(id);
      requeued.push(id);
    }
  })();
  return requeued;
}

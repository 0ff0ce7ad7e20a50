import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import { builtModule } from "../../util/built-module.js";

const ENTRY = builtModule(import.meta.url, "./checkpoint-worker-entry.js");

/** SQLite's own default: what the connections go back to when the worker is gone. */
const AUTO_CHECKPOINT_PAGES = 1000;

export interface Checkpointer {
  /**
   * Checkpoint both files now and resolve when done (or at once when the thread is gone): a large batch's pages are
   * then in the database files before its first searches, whose connections would otherwise map the files again when
   * a later checkpoint grows them (every page they touch faulting in anew).
   */
  now(): Promise<void>;
  close(): Promise<void>;
}

/**
 * WAL checkpoints in a worker thread, for the server. SQLite runs a checkpoint inside whichever commit finds the WAL
 * past 1,000 pages, and a checkpoint ends with fsync: on the event loop, behind a large ingestion or a backup's
 * writeback, one fsync took 200 ms and every request waited (docs/benchmarks.md, "Ingestion"). Here the server's
 * connections stop checkpointing and a thread of its own checkpoints every `intervalMs`; should the thread fail,
 * the connections checkpoint again as before, and the failure is logged.
 */
export function startCheckpointer(databases: Array<{ db: Database.Database; file: string }>, onFailure: (err: Error) => void, intervalMs = 500): Checkpointer {
  const worker = new Worker(ENTRY, { workerData: { files: databases.map((d) => d.file), intervalMs } });
  for (const { db } of databases) db.pragma("wal_autocheckpoint = 0");
  let stopping = false;
  let failed = false;
  // A thread that throws also exits: the connections fall back, and the failure is reported, once.
  const fallBack = (err: Error) => {
    if (failed) return;
    failed = true;
    for (const { db } of databases) if (db.open) db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    if (!stopping) onFailure(err);
  };
  worker.on("error", fallBack);
  worker.on("exit", (code) => {
    if (code !== 0 || !stopping) fallBack(new Error(`the checkpoint worker exited with code ${code}`));
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  // Requests for a checkpoint now, answered in order by the thread (it answers each "now" once it has checkpointed).
  const waiting: Array<() => void> = [];
  worker.on("message", (message: string) => {
    if (message === "checkpointed") waiting.shift()?.();
  });
  void exited.then(() => waiting.splice(0).forEach((resolve) => resolve()));
  return {
    now() {
      if (failed || stopping) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        worker.postMessage("now");
      });
    },
    async close() {
      stopping = true;
      worker.postMessage("stop");
      await exited;
      for (const { db } of databases) if (db.open) db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    },
  };
}

import { Worker } from "node:worker_threads";
import { LdsError } from "../errors.js";
import { builtModule } from "../util/built-module.js";
import { damagedDatabase } from "./check-snapshot.js";

const ENTRY = builtModule(import.meta.url, "./virtual-table-check-entry.js");

export type VirtualTableCheckAnswer = { ok: true } | { ok: false; integrity: boolean; message: string };

export interface VirtualTableCheckOptions {
  /** In a server: the thread runs at a lower priority than the requests. */
  yieldToRequests: boolean;
  /** Aborting stops the thread; the promise then rejects with `interrupted`. */
  signal: AbortSignal;
}

/**
 * SQLite's integrity check of a database's virtual tables, on a thread of its own. For lds.db that is the FTS5
 * index check, which re-reads the whole inverted index and takes most of a verify's checking time: run beside the
 * extraction of the files after lds.db, it is no longer added to it. Rejects with the archive_corrupt error
 * checkExtractedSnapshot gives for the same damage, naming `part`.
 */
export function checkVirtualTablesInThread(file: string, part: string, options: VirtualTableCheckOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(ENTRY, { workerData: { file, yieldToRequests: options.yieldToRequests } });
    const onAbort = () => {
      void worker.terminate();
      reject(new LdsError("interrupted", `The check of ${part} was stopped before it finished.`));
    };
    if (options.signal.aborted) return onAbort();
    options.signal.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (answer: VirtualTableCheckAnswer) => {
      if (answer.ok) resolve();
      else reject(damagedDatabase(part, answer.integrity, answer.message));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      options.signal.removeEventListener("abort", onAbort);
      if (code !== 0) reject(new Error(`the thread checking ${part} exited with code ${code}`));
    });
  });
}

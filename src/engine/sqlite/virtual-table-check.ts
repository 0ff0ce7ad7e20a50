import { builtModule } from "../../util/built-module.js";
import { workerAnswer } from "../../util/worker-answer.js";
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
export async function checkVirtualTablesInThread(file: string, part: string, options: VirtualTableCheckOptions): Promise<void> {
  const answer = await workerAnswer<VirtualTableCheckAnswer>(
    ENTRY,
    { file, yieldToRequests: options.yieldToRequests },
    {
      what: `the thread checking ${part}`,
      signal: options.signal,
      stoppedMessage: `The check of ${part} was stopped before it finished.`,
    },
  );
  if (!answer.ok) throw damagedDatabase(part, answer.integrity, answer.message);
}

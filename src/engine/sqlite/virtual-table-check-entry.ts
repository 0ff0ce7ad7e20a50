import { parentPort, workerData } from "node:worker_threads";
import { lowerThisThreadsPriority } from "../../util/thread-priority.js";
import { checkVirtualTables, IntegrityProblem, openForCheck } from "./database-checks.js";
import type { VirtualTableCheckAnswer } from "./virtual-table-check.js";

// The thread side of checkVirtualTablesInThread: one check, one answer. It imports only what the check needs,
// so that the thread costs little memory beside a restore's decryption thread.
const { file, yieldToRequests } = workerData as { file: string; yieldToRequests: boolean };
if (yieldToRequests) lowerThisThreadsPriority();
let answer: VirtualTableCheckAnswer;
try {
  const db = openForCheck(file);
  try {
    checkVirtualTables(db);
  } finally {
    db.close();
  }
  answer = { ok: true };
} catch (err) {
  answer = { ok: false, integrity: err instanceof IntegrityProblem, message: (err as Error)?.message ?? String(err) };
}
parentPort!.postMessage(answer);

import { parentPort, workerData } from "node:worker_threads";
import { hashFileSync } from "../../util/files.js";
import { errorForThread } from "../../util/worker-answer.js";
import { lowerThisThreadsPriority } from "../../util/thread-priority.js";
import { copyDatabase } from "./copy-database.js";
import type { CopyDatabaseAnswer } from "./copy-database-thread.js";

// The thread side of copyDatabaseInThread: "pinned" as progress, then one answer with the copy's hash.
const { source, destination, needsVectorExtension, yieldToRequests } = workerData as {
  source: string;
  destination: string;
  needsVectorExtension: boolean;
  yieldToRequests: boolean;
};
if (yieldToRequests) lowerThisThreadsPriority();
let answer: CopyDatabaseAnswer;
try {
  await copyDatabase(source, destination, needsVectorExtension, () => parentPort!.postMessage({ progress: "pinned" }));
  answer = { ok: true, copy: { file: destination, ...hashFileSync(destination) } };
} catch (err) {
  answer = { ok: false, error: errorForThread(err) };
}
parentPort!.postMessage(answer);

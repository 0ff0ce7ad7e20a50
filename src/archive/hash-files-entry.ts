import { parentPort, workerData } from "node:worker_threads";
import { hashFileSync } from "../util/files.js";
import { lowerThisThreadsPriority } from "../util/thread-priority.js";
import type { HashFilesAnswer } from "./hash-files-thread.js";

// The thread side of hashFilesInThread: hash the files in order, one answer.
const { files, yieldToRequests } = workerData as { files: string[]; yieldToRequests: boolean };
if (yieldToRequests) lowerThisThreadsPriority();
let answer: HashFilesAnswer;
try {
  answer = { ok: true, files: files.map((file) => ({ file, ...hashFileSync(file) })) };
} catch (err) {
  answer = { ok: false, message: (err as Error)?.message ?? String(err) };
}
parentPort!.postMessage(answer);

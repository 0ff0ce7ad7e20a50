import fs from "node:fs";
import os from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { LdsError } from "../errors.js";
import { HEAVY_TASKS, type HeavyTask } from "./heavy-tasks.js";

// The thread side of runHeavy: call the task, post its result or its error.
lowerThisThreadsPriority();
const { task, args } = workerData as { task: HeavyTask; args: unknown[] };
try {
  const result = await (HEAVY_TASKS[task] as (...a: unknown[]) => unknown)(...args);
  parentPort!.postMessage({ ok: true, result });
} catch (err) {
  parentPort!.postMessage({
    ok: false,
    error: err instanceof LdsError ? { code: err.code, message: err.message, hint: err.hint } : { message: (err as Error)?.message ?? String(err) },
  });
}

/**
 * Background work yields the CPU to the server's requests: on two cores a snapshot or a hash at full priority made
 * every request wait its turn. Linux gives each thread its own nice value, set through the thread's id; elsewhere
 * (or without /proc) the thread keeps the process's priority.
 */
function lowerThisThreadsPriority(): void {
  try {
    const threadId = Number(fs.readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, 10);
  } catch {
    // Not Linux, or not allowed: run at the process's priority.
  }
}

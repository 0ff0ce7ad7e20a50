import { parentPort, workerData } from "node:worker_threads";
import { errorForThread } from "../util/worker-answer.js";
import { lowerThisThreadsPriority } from "../util/thread-priority.js";
import { HEAVY_TASKS, type HeavyTask } from "./heavy-tasks.js";

// The thread side of runHeavy: call the task, post its result or its error.
lowerThisThreadsPriority();
const { task, args } = workerData as { task: HeavyTask; args: unknown[] };
try {
  const result = await (HEAVY_TASKS[task] as (...a: unknown[]) => unknown)(...args);
  parentPort!.postMessage({ ok: true, result });
} catch (err) {
  parentPort!.postMessage({ ok: false, error: errorForThread(err) });
}

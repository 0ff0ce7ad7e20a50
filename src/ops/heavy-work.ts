import { builtModule } from "../util/built-module.js";
import { errorFromThread, workerAnswer, type ThreadError } from "../util/worker-answer.js";
import { HEAVY_TASKS, type HeavyTask } from "./heavy-tasks.js";

const WORKER_ENTRY = builtModule(import.meta.url, "./heavy-work-entry.js");

let offThread = false;

/**
 * The server turns this on at start: there, synchronous SQLite work (database snapshots, integrity_check) would stop the
 * event loop for seconds. A CLI process has nothing else to do, and a worker would only add memory (~30 MiB).
 */
export function runHeavyWorkOffThread(enabled: boolean): void {
  offThread = enabled;
}

/** Whether this process is a server whose background threads must yield to its requests. */
export function heavyWorkYieldsToRequests(): boolean {
  return offThread;
}

type Task<K extends HeavyTask> = (typeof HEAVY_TASKS)[K];

/** Run a heavy task: in a worker thread when the server asked for it, else inline. Errors keep their code and hint. */
export async function runHeavy<K extends HeavyTask>(task: K, ...args: Parameters<Task<K>>): Promise<ReturnType<Task<K>>> {
  if (!offThread) return (HEAVY_TASKS[task] as (...a: unknown[]) => ReturnType<Task<K>>)(...args);
  type Answer = { ok: true; result: ReturnType<Task<K>> } | { ok: false; error: ThreadError };
  const answer = await workerAnswer<Answer>(WORKER_ENTRY, { task, args }, { what: `the worker for ${task}` });
  if (answer.ok) return answer.result;
  throw errorFromThread(answer.error);
}

import { Worker } from "node:worker_threads";
import { LdsError, type ErrorCode } from "../errors.js";
import { builtModule } from "../util/built-module.js";
import { HEAVY_TASKS, type HeavyTask } from "./heavy-tasks.js";

const WORKER_ENTRY = builtModule(import.meta.url, "./heavy-work-entry.js");

let offThread = false;

/**
 * The server turns this on at start: there, synchronous SQLite work (VACUUM INTO, integrity_check) would stop the
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
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_ENTRY, { workerData: { task, args } });
    worker.once("message", (message: { ok: true; result: ReturnType<Task<K>> } | { ok: false; error: { code?: string; message: string; hint?: string } }) => {
      if (message.ok) return resolve(message.result);
      const { code, message: text, hint } = message.error;
      reject(code ? new LdsError(code as ErrorCode, text, { hint }) : new Error(text));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the worker for ${task} exited with code ${code}`));
    });
  });
}

import { Worker } from "node:worker_threads";
import { LdsError } from "../errors.js";

export interface WorkerAnswerOptions {
  /** Names the work in the error of a thread that exits without answering: "the worker for snapshotVolume". */
  what: string;
  /** Aborting terminates the thread; the promise then rejects with `interrupted` and this message. */
  signal?: AbortSignal;
  stoppedMessage?: string;
}

/**
 * Start a thread on `entry` that posts one message, and resolve with that message. A thread that throws or exits
 * without answering rejects; the caller turns the answer into its own result or error.
 */
export function workerAnswer<T>(entry: URL, workerData: unknown, options: WorkerAnswerOptions): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(entry, { workerData });
    const { signal } = options;
    const onAbort = () => {
      void worker.terminate();
      reject(new LdsError("interrupted", options.stoppedMessage ?? `${options.what} was stopped before it finished.`));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (answer: T) => resolve(answer));
    worker.once("error", reject);
    worker.once("exit", (code) => {
      signal?.removeEventListener("abort", onAbort);
      if (code !== 0) reject(new Error(`${options.what} exited with code ${code}`));
    });
  });
}

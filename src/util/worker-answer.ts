import { Worker } from "node:worker_threads";
import { LdsError, type ErrorCode } from "../errors.js";

export interface WorkerAnswerOptions {
  /** Names the work in the error of a thread that exits without answering: "the worker for snapshotVolume". */
  what: string;
  /** Aborting terminates the thread; the promise then rejects with `interrupted` and this message. */
  signal?: AbortSignal;
  stoppedMessage?: string;
  /**
   * Messages `{ progress: … }` the thread posts before its answer (e.g. "the snapshot is pinned"): passed here and not
   * taken for the answer.
   */
  onProgress?: (progress: unknown) => void;
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
    worker.on("message", (message: T | { progress: unknown }) => {
      if (options.onProgress && typeof message === "object" && message !== null && "progress" in message) options.onProgress(message.progress);
      else resolve(message as T);
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      signal?.removeEventListener("abort", onAbort);
      if (code !== 0) reject(new Error(`${options.what} exited with code ${code}`));
    });
  });
}

/** An error as a thread posts it: an LdsError keeps its code and hint across the thread boundary. */
export type ThreadError = { code?: string; message: string; hint?: string };

export function errorForThread(err: unknown): ThreadError {
  return err instanceof LdsError ? { code: err.code, message: err.message, hint: err.hint } : { message: (err as Error)?.message ?? String(err) };
}

export function errorFromThread(error: ThreadError): Error {
  return error.code ? new LdsError(error.code as ErrorCode, error.message, { hint: error.hint }) : new Error(error.message);
}

import { Worker } from "node:worker_threads";
import { LdsError, type ErrorCode } from "../errors.js";

/**
 * Compiled modules live in dist/. Under the test runner this file runs from src/*.ts, but a worker thread needs
 * plain JavaScript, so it loads the built copy (npm test builds first).
 */
const DIST = import.meta.url.endsWith(".ts") ? new URL("../../dist/", import.meta.url) : new URL("../", import.meta.url);

/**
 * Call `fn` of a module (path relative to dist/, e.g. "snapshot/snapshot-volume.js") in a worker thread and
 * return its result. For synchronous SQLite work (VACUUM INTO, integrity_check) that would otherwise stop the
 * server's event loop for seconds. An LdsError thrown there is rebuilt here with its code and hint.
 */
export function runInWorker<T>(module: string, fn: string, args: unknown[]): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const worker = new Worker(new URL("util/worker-entry.js", DIST), {
      workerData: { module: new URL(module, DIST).href, fn, args },
    });
    worker.once("message", (message: { ok: true; result: T } | { ok: false; error: { code?: string; message: string; hint?: string } }) => {
      if (message.ok) return resolve(message.result);
      const { code, message: text, hint } = message.error;
      reject(code ? new LdsError(code as ErrorCode, text, { hint }) : new Error(text));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`worker for ${fn} exited with code ${code}`));
    });
  });
}

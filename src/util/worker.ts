import { Worker } from "node:worker_threads";
import { LdsError, type ErrorCode } from "../errors.js";

/**
 * Compiled modules live in dist/. Under the test runner this file runs from src/*.ts, but a worker thread needs
 * plain JavaScript, so it loads the built copy (npm test builds first).
 */
const DIST = import.meta.url.endsWith(".ts") ? new URL("../../dist/", import.meta.url) : new URL("../", import.meta.url);

let offThread = false;

/**
 * The server turns this on at start: there, synchronous SQLite work (VACUUM INTO, integrity_check) would stop the
 * event loop for seconds. A CLI process has nothing else to do, and a worker would only add memory (~30 MiB).
 */
export function runHeavyWorkOffThread(enabled: boolean): void {
  offThread = enabled;
}

/**
 * Call `fn` of a module (path relative to dist/, e.g. "snapshot/snapshot-volume.js"): in a worker thread when
 * the server asked for it, else inline. An LdsError thrown in a worker is rebuilt here with its code and hint.
 */
export async function runInWorker<T>(module: string, fn: string, args: unknown[]): Promise<T> {
  if (!offThread) {
    const loaded = (await import(new URL(module, DIST).href)) as Record<string, (...a: unknown[]) => T | Promise<T>>;
    return loaded[fn]!(...args);
  }
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

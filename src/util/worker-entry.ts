import { parentPort, workerData } from "node:worker_threads";
import { LdsError } from "../errors.js";

// The thread side of runInWorker: import the module, call the function, post the result or the error.
const { module, fn, args } = workerData as { module: string; fn: string; args: unknown[] };
try {
  const loaded = (await import(module)) as Record<string, (...a: unknown[]) => unknown>;
  parentPort!.postMessage({ ok: true, result: await loaded[fn]!(...args) });
} catch (err) {
  const e = err as Error;
  parentPort!.postMessage({
    ok: false,
    error: err instanceof LdsError ? { code: err.code, message: err.message, hint: err.hint } : { message: e?.message ?? String(err) },
  });
}

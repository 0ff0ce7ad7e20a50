import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A streaming stage that allocates a fresh buffer for every chunk (a decipher's output, a file read, a tar slice)
 * leaves dead buffers behind faster than V8 looks for them: the JavaScript objects are tiny, so the young
 * generation rarely fills, and V8 only scavenges for buffer memory once about 32 MiB of it has built up in a
 * thread. Measured on a 1.3 GB encrypted restore: 24 MiB of peak RSS in the decryption thread alone
 * (docs/benchmarks.md, Issue 17, "RSS"). A minor collection costs about 0.1 ms; collecting every few
 * MiB of traffic keeps that pile small for a few hundred collections per GiB.
 *
 * V8 exposes its collector only under `--expose-gc`: the flag is set for the moment it takes to obtain the
 * function from a new context, then cleared, so that no other code sees a global `gc`.
 */
let collect: ((options: { type: "minor" }) => void) | null | undefined;

function minorCollector(): ((options: { type: "minor" }) => void) | null {
  if (collect !== undefined) return collect;
  // Started with --expose-gc (a profiling operator, a test runner): use it, and leave the flag as it was.
  const exposed = (globalThis as { gc?: (options: { type: "minor" }) => void }).gc;
  if (typeof exposed === "function") return (collect = exposed);
  try {
    setFlagsFromString("--expose-gc");
    collect = runInNewContext("gc") as (options: { type: "minor" }) => void;
  } catch {
    collect = null; // a runtime without it streams as before, with a larger peak
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
  return collect;
}

/** Every `every` bytes counted, collect this thread's young generation, where those dead buffers are. */
export function youngGarbageCollector(every = 4 * 1024 * 1024): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < every) return;
    since = 0;
    minorCollector()?.({ type: "minor" });
  };
}

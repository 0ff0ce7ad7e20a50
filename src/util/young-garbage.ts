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
 * function from a new context, then cleared, so that no other code sees a global `gc`. It collects the young
 * generation with { type: "minor" }, and the whole heap without options (Node 20's V8 reads no { type: "major" }).
 */
type Collect = (options?: { type: "minor" }) => void;
let collect: Collect | null | undefined;

function v8Collector(): Collect | null {
  if (collect !== undefined) return collect;
  // Started with --expose-gc (a profiling operator, a test runner): use it, and leave the flag as it was.
  const exposed = (globalThis as { gc?: Collect }).gc;
  if (typeof exposed === "function") return (collect = exposed);
  try {
    setFlagsFromString("--expose-gc");
    collect = runInNewContext("gc") as Collect;
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
    v8Collector()?.({ type: "minor" });
  };
}

let pausesAllowed = true;

/** The server turns this off at start: a forced major collection stops its event loop for every request waiting. */
export function allowCollectionPauses(allowed: boolean): void {
  pausesAllowed = allowed;
}

/**
 * Every `every` calls, a major collection, in a command only. An ingestion keeps about 13 MiB alive, but whether
 * its chunks' garbage dies young or is promoted (and then piles up in the old generation until V8's next major
 * collection, 25-50 MiB later) depends on where the scavenges fall: the same command peaked at ~137 or ~174 MiB
 * from one run to the next. A major collection of that small heap takes 2-3 ms.
 */
export function oldGarbageCollector(every: number): () => void {
  let calls = 0;
  return () => {
    if (!pausesAllowed || ++calls % every !== 0) return;
    v8Collector()?.();
  };
}

/**
 * A major collection now, in a search thread that just built a word index or a vector copy (tens of MiB of garbage
 * from reading the batch): 20-80 ms measured, paid before the batch is published instead of by its first search.
 */
export function collectBuildGarbage(): void {
  v8Collector()?.();
}

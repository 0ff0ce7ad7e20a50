import { spawnSync } from "node:child_process";
import { setImmediate as nextTurn } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { allowCollectionPauses, oldGarbageCollector, youngGarbageCollector } from "../../src/util/young-garbage.js";

const MiB = 1024 * 1024;

/** Dead buffers of the size a stream stage leaves behind (a file read, a decipher's output). */
function leaveDeadBuffers(total: number): void {
  for (let i = 0; i < total / (256 * 1024); i++) Buffer.allocUnsafeSlow(256 * 1024).fill(1);
}

/** Array buffers alive in this thread, once V8's array-buffer sweeper (concurrent) has caught up. */
async function settledArrayBuffers(): Promise<number> {
  let last = process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 20; i++) {
    await nextTurn();
    const now = process.memoryUsage().arrayBuffers;
    if (now === last) return now;
    last = now;
  }
  return last;
}

describe("youngGarbageCollector", () => {
  it("frees the dead buffers of a stream once the counted bytes pass the interval", async () => {
    const collect = youngGarbageCollector(8 * MiB);
    // V8 does not look for them on its own (too few JavaScript objects were allocated to fill the young generation),
    // but the test runner's own work may start a collection meanwhile: set the scene again if it did.
    let before = 0;
    for (let attempt = 0; attempt < 5; attempt++) {
      before = await settledArrayBuffers();
      leaveDeadBuffers(24 * MiB);
      if ((await settledArrayBuffers()) > before + 20 * MiB) break;
    }
    expect(await settledArrayBuffers()).toBeGreaterThan(before + 20 * MiB);

    collect(4 * MiB); // under the interval: nothing happens yet
    expect(await settledArrayBuffers()).toBeGreaterThan(before + 20 * MiB);

    // The scavenger frees a dead buffer's memory at its first or second pass (V8's sweeper may still hold it after
    // the first): the stream keeps counting, as it would.
    for (let i = 0; i < 3; i++) collect(8 * MiB);
    expect(await settledArrayBuffers()).toBeLessThan(before + 4 * MiB);
  });

  it("leaves no global gc behind", () => {
    youngGarbageCollector(1)(1);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });

  it("uses the gc of a process started with --expose-gc and leaves that flag on", () => {
    // The built module, in a process of its own: the flag is process-wide (npm test builds dist/ first).
    const built = fileURLToPath(new URL("../../dist/util/young-garbage.js", import.meta.url));
    const script = `
      import { runInNewContext } from "node:vm";
      const { youngGarbageCollector } = await import(${JSON.stringify(built)});
      youngGarbageCollector(1)(1);
      console.log(typeof globalThis.gc, typeof runInNewContext("typeof gc === 'function' ? gc : undefined"));`;
    const child = spawnSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(child.stderr).toBe("");
    expect(child.stdout.trim()).toBe("function function");
  });
});

/** Major collections that were asked for (gc()), not V8's own: those may come at any time. */
async function forcedMajorCollections(during: () => void): Promise<number> {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ["gc"] });
  during();
  // gc entries reach the observer a few turns after the collection.
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return entries.filter((e) => {
    const detail = (e as unknown as { detail: { kind: number; flags: number } }).detail;
    return detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR && (detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0;
  }).length;
}

describe("oldGarbageCollector", () => {
  it("runs a major collection every n calls in a command", async () => {
    const collect = oldGarbageCollector(3);
    expect(await forcedMajorCollections(() => (collect(), collect()))).toBe(0);
    expect(await forcedMajorCollections(() => collect())).toBe(1);
    expect(
      await forcedMajorCollections(() => {
        for (let i = 0; i < 6; i++) collect();
      }),
    ).toBe(2);
  });

  it("never in a server, whose event loop it would stop", async () => {
    allowCollectionPauses(false);
    try {
      const collect = oldGarbageCollector(1);
      expect(
        await forcedMajorCollections(() => {
          for (let i = 0; i < 5; i++) collect();
        }),
      ).toBe(0);
    } finally {
      allowCollectionPauses(true);
    }
  });
});

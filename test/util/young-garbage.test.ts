import { spawnSync } from "node:child_process";
import { setImmediate as nextTurn } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { youngGarbageCollector } from "../../src/util/young-garbage.js";

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

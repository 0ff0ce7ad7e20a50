import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { freshStore, type OpenStore } from "./harness.js";

/** The request windows rate limits count in: per key, fixed, all or nothing under a ceiling. */
export function describeRequestWindows(open: OpenStore): void {
  describe("request windows", () => {
    const t = freshStore(open);
    // Keys of their own per test: windows are not records, and an engine may keep them past a test's reset.
    const key = () => `test:${randomUUID()}`;

    it("counts a key's requests in one window, apart from other keys'", async () => {
      const [a, b] = [key(), key()];
      const first = await t.store.requestWindows.charge(a, 60_000, 1);
      expect(first).toMatchObject({ count: 1, charged: true });
      expect(Math.abs(first.start - Date.now())).toBeLessThan(60_000);
      expect(first.resetsInMs).toBeGreaterThan(50_000);
      expect(first.resetsInMs).toBeLessThanOrEqual(60_000);
      expect(await t.store.requestWindows.charge(a, 60_000, 1)).toMatchObject({ start: first.start, count: 2, charged: true });
      const third = await t.store.requestWindows.charge(a, 60_000, 3);
      expect(third).toMatchObject({ start: first.start, count: 5, charged: true });
      expect(third.resetsInMs).toBeLessThanOrEqual(first.resetsInMs);
      expect(await t.store.requestWindows.charge(b, 60_000, 1)).toMatchObject({ count: 1, charged: true });
    });

    it("begins a new window once the last one has lasted its length", async () => {
      const a = key();
      const first = await t.store.requestWindows.charge(a, 50, 4);
      // A condition, not a pause: charges keep landing in the first window until it is over.
      let next = await t.store.requestWindows.charge(a, 50, 1);
      for (const until = Date.now() + 10_000; next.start === first.start && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        next = await t.store.requestWindows.charge(a, 50, 1);
      }
      expect(next.start).toBeGreaterThan(first.start);
      expect(next).toMatchObject({ count: 1, charged: true });
    });

    it("with a ceiling, counts all or nothing", async () => {
      const a = key();
      await t.store.requestWindows.charge(a, 60_000, 7);
      expect(await t.store.requestWindows.charge(a, 60_000, 4, 10)).toMatchObject({ count: 7, charged: false });
      expect(await t.store.requestWindows.charge(a, 60_000, 3, 10)).toMatchObject({ count: 10, charged: true });
      expect(await t.store.requestWindows.charge(a, 60_000, 1, 10)).toMatchObject({ count: 10, charged: false });
      // A first charge larger than the ceiling counts nothing either.
      const refused = await t.store.requestWindows.charge(key(), 60_000, 11, 10);
      expect(refused).toMatchObject({ count: 0, charged: false });
      expect(refused.resetsInMs).toBeGreaterThan(50_000);
    });

    it("charges made at once are each counted once", async () => {
      const a = key();
      const windows = await Promise.all(Array.from({ length: 40 }, () => t.store.requestWindows.charge(a, 60_000, 1)));
      expect(windows.map((w) => w.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    });
  });
}

import { describe, expect, it } from "vitest";
import { freshStore, LEASE_MS, OWNER, type OpenStore } from "./harness.js";
import { newLibrary } from "./libraries.contract.js";

/** jobs: oldest first, each handed out once, tokens sealed until the job ends, pending per library version. */
export function describeJobs(open: OpenStore): void {
  describe("jobs", () => {
    const t = freshStore(open);
    const libraries = async () => {
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      await t.store.libraries.create(newLibrary("/acme/gadgets"));
    };

    it("hands out queued jobs oldest first, each once, and nothing when none waits", async () => {
      await libraries();
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toBeUndefined();
      expect(await t.store.jobs.hasQueued()).toBe(false);
      const first = await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { url: "https://h/acme/widgets" } });
      const second = await t.store.jobs.enqueue({ libraryId: "/acme/gadgets", kind: "refresh", payload: { source: "wiki", teamId: 1, cloudId: "c", spaceKey: "DOCS", pageIds: ["1", "2"] } });
      expect(second).toBeGreaterThan(first);
      expect(await t.store.jobs.hasQueued()).toBe(true);
      const held = { leaseOwner: OWNER, leaseUntil: expect.any(String), attempts: 1 };
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toEqual({ id: first, libraryId: "/acme/widgets", kind: "ingest", payload: { url: "https://h/acme/widgets" }, ...held });
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toEqual({
        id: second,
        libraryId: "/acme/gadgets",
        kind: "refresh",
        payload: { source: "wiki", teamId: 1, cloudId: "c", spaceKey: "DOCS", pageIds: ["1", "2"] },
        ...held,
      });
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toBeUndefined();
      expect(await t.store.jobs.hasQueued()).toBe(false);
    });

    it("two claims at once never get the same job", async () => {
      await libraries();
      // Five versions: one job of each may run at a time.
      for (let i = 0; i < 5; i++) await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { version: `v${i}` } });
      const claimed = await Promise.all(Array.from({ length: 8 }, () => t.store.jobs.claimNext(OWNER, LEASE_MS)));
      const ids = claimed.filter((j) => j !== undefined).map((j) => j.id);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
    });

    it("keeps a job's token sealed until the job finishes, done or failed", async () => {
      await libraries();
      const done = await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: {} }, "tok-done");
      const failed = await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: {} }, "tok-failed");
      const without = await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: {} });
      expect(await t.store.jobs.token(done)).toBe("tok-done");
      expect(await t.store.jobs.token(without)).toBeUndefined();
      await t.store.jobs.claimNext(OWNER, LEASE_MS);
      await t.store.jobs.finish(done, OWNER, null);
      await t.store.jobs.claimNext(OWNER, LEASE_MS);
      await t.store.jobs.finish(failed, OWNER, "repository_not_found: gone");
      expect(await t.store.jobs.token(done)).toBeUndefined();
      expect(await t.store.jobs.token(failed)).toBeUndefined();
      expect(await t.store.settings.hasSecret(`job:${done}:gitToken`)).toBe(false);
    });

    it("answers whether a job waits or runs for a library version ('' = current content), and for any version", async () => {
      await libraries();
      expect(await t.store.jobs.hasPending("/acme/widgets")).toBe(false);
      expect(await t.store.jobs.hasAnyPending("/acme/widgets")).toBe(false);
      const pinned = await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { version: "v1", branch: "v1" } });
      expect(await t.store.jobs.hasPending("/acme/widgets", "v1")).toBe(true);
      expect(await t.store.jobs.hasPending("/acme/widgets")).toBe(false);
      expect(await t.store.jobs.hasPending("/acme/widgets", "")).toBe(false);
      expect(await t.store.jobs.hasAnyPending("/acme/widgets")).toBe(true);
      expect(await t.store.jobs.hasAnyPending("/acme/gadgets")).toBe(false);
      await t.store.jobs.claimNext(OWNER, LEASE_MS);
      expect(await t.store.jobs.hasPending("/acme/widgets", "v1")).toBe(true);
      await t.store.jobs.finish(pinned, OWNER, null);
      expect(await t.store.jobs.hasAnyPending("/acme/widgets")).toBe(false);
      await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "refresh", payload: { url: "u" } });
      expect(await t.store.jobs.hasPending("/acme/widgets")).toBe(true);
      expect(await t.store.jobs.hasPending("/acme/widgets", "v1")).toBe(false);
    });

    it("requeueRunningAsSoleProcess queues the running jobs again (not the finished ones), answering how many", async () => {
      await libraries();
      const a = await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: {} }, "tok-a");
      const b = await t.store.jobs.enqueue({ libraryId: "/acme/gadgets", kind: "ingest", payload: {} });
      const c = await t.store.jobs.enqueue({ libraryId: "/acme/gadgets", kind: "refresh", payload: { version: "v2" } });
      await t.store.jobs.claimNext(OWNER, LEASE_MS);
      await t.store.jobs.claimNext(OWNER, LEASE_MS);
      await t.store.jobs.claimNext(OWNER, LEASE_MS);
      await t.store.jobs.finish(c, OWNER, null);
      expect(await t.store.jobs.requeueRunningAsSoleProcess()).toBe(2);
      expect(await t.store.jobs.requeueRunningAsSoleProcess()).toBe(0);
      expect((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.id).toBe(a);
      expect(await t.store.jobs.token(a)).toBe("tok-a");
      expect((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.id).toBe(b);
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toBeUndefined();
    });
  });
}

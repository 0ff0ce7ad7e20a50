import { describe, expect, it } from "vitest";
import type { UsageCount } from "../../../src/store/records.js";
import { freshStore, type OpenStore } from "./harness.js";

/** Distinct client names kept per library and day (store/usage.ts: callers name them, so they are capped). */
const CLIENT_NAMES_PER_DAY = 10;

/** usage counters (added up, capped, read by day, pruned) and the audit log (newest first). */
export function describeUsageAndAudit(open: OpenStore): void {
  describe("usage", () => {
    const t = freshStore(open);
    const count = (day: string, name: string, n = 1, libraryId = "/acme/widgets"): UsageCount => ({ libraryId, day, dimension: "client", name, count: n });

    it("adds counters up per library, day, dimension and name, and reads a library's from a day on, by day", async () => {
      await t.store.usage.add([count("2026-11-02", "api", 2), count("2026-11-01", "api"), count("2026-11-01", "mcp", 5), count("2026-11-01", "api", 1, "/other/lib")]);
      await t.store.usage.add([count("2026-11-01", "api", 3), { ...count("2026-11-01", "deploy"), dimension: "topic" }]);
      const read = await t.store.usage.read("/acme/widgets", "2026-11-01");
      expect(read.map((u) => u.day)).toEqual(["2026-11-01", "2026-11-01", "2026-11-01", "2026-11-02"]);
      expect([...read].sort((a, b) => `${a.day}${a.dimension}${a.name}`.localeCompare(`${b.day}${b.dimension}${b.name}`))).toEqual([
        count("2026-11-01", "api", 4),
        count("2026-11-01", "mcp", 5),
        { ...count("2026-11-01", "deploy"), dimension: "topic" },
        count("2026-11-02", "api", 2),
      ]);
      expect(await t.store.usage.read("/acme/widgets", "2026-11-02")).toEqual([count("2026-11-02", "api", 2)]);
      expect(await t.store.usage.read("/nobody/here", "2000-01-01")).toEqual([]);
    });

    it("keeps at most the cap of distinct names a day; names already kept go on counting", async () => {
      const names = Array.from({ length: CLIENT_NAMES_PER_DAY + 3 }, (_, i) => `client-${String(i).padStart(2, "0")}`);
      await t.store.usage.add(names.map((name) => count("2026-11-01", name)));
      await t.store.usage.add([count("2026-11-01", "client-00", 6), count("2026-11-02", "late-comer")]);
      const day1 = (await t.store.usage.read("/acme/widgets", "2026-11-01")).filter((u) => u.day === "2026-11-01");
      expect(day1).toHaveLength(CLIENT_NAMES_PER_DAY);
      expect(day1.find((u) => u.name === "client-00")!.count).toBe(7);
      expect(await t.store.usage.read("/acme/widgets", "2026-11-02")).toEqual([count("2026-11-02", "late-comer")]);
    });

    it("prunes the days before a day, answering how many counters went", async () => {
      await t.store.usage.add([count("2026-10-30", "api"), count("2026-10-31", "api"), count("2026-10-31", "mcp"), count("2026-11-01", "api")]);
      expect(await t.store.usage.prune("2026-11-01")).toBe(3);
      expect(await t.store.usage.prune("2026-11-01")).toBe(0);
      expect(await t.store.usage.read("/acme/widgets", "2000-01-01")).toEqual([count("2026-11-01", "api")]);
    });
  });

  describe("audit", () => {
    const t = freshStore(open);

    it("records entries with when they happened and lists them newest first, up to a limit (100 by default)", async () => {
      for (let i = 0; i < 105; i++) await t.store.audit.record({ actor: "admin", action: "team.create", subject: `team-${i}`, details: { n: i, nested: { plan: "pro" } } });
      const all = await t.store.audit.list();
      expect(all).toHaveLength(100);
      expect(all[0]).toEqual({ at: expect.any(String), actor: "admin", action: "team.create", subject: "team-104", details: { n: 104, nested: { plan: "pro" } } });
      expect(Number.isNaN(Date.parse(all[0]!.at))).toBe(false);
      expect(all.map((e) => e.subject).slice(0, 3)).toEqual(["team-104", "team-103", "team-102"]);
      expect((await t.store.audit.list(2)).map((e) => e.subject)).toEqual(["team-104", "team-103"]);
    });

    it("lists nothing on a new store", async () => {
      expect(await t.store.audit.list()).toEqual([]);
    });
  });
}

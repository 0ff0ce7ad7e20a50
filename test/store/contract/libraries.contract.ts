import { describe, expect, it } from "vitest";
import type { NewLibrary } from "../../../src/store/records.js";
import { expectLdsError, freshStore, LEASE_MS, nextMillisecond, OWNER, type OpenStore } from "./harness.js";

export const newLibrary = (id: string, change: Partial<NewLibrary> = {}): NewLibrary => ({
  id,
  teamId: null,
  title: id.split("/").pop()!,
  source: "git",
  sourceUrl: `https://git.example.test${id}`,
  sourceKey: `git.example.test${id}`,
  private: false,
  ownerUserId: null,
  ...change,
});

/** libraries (all-or-nothing creation and moves, removal refused while busy, redirects) and their pinned versions. */
export function describeLibraries(open: OpenStore): void {
  describe("libraries", () => {
    const t = freshStore(open);

    it("creates a library, queued, with its source fixed; finds it, lists them by id and by source", async () => {
      const acme = await t.store.teams.create("acme", "pro");
      const owner = await t.store.users.add(acme, "a@acme.test", "owner");
      await t.store.libraries.create(newLibrary("/zeta/lib"));
      await t.store.libraries.create(newLibrary("/~team-1/private", { teamId: acme.id, private: true, ownerUserId: owner.id, description: "Private docs", sourceKey: "git.example.test/zeta/lib" }));
      expect(await t.store.libraries.find("/zeta/lib")).toEqual({
        id: "/zeta/lib",
        teamId: null,
        title: "lib",
        description: "",
        private: false,
        source: "git",
        sourceUrl: "https://git.example.test/zeta/lib",
        sourceKey: "git.example.test/zeta/lib",
        branches: [],
        ownerUserId: null,
        state: "queued",
        stateReason: null,
        updatedAt: expect.any(String),
      });
      expect(await t.store.libraries.find("/~team-1/private")).toMatchObject({ teamId: acme.id, private: true, ownerUserId: owner.id, description: "Private docs" });
      expect(await t.store.libraries.find("/nobody/here")).toBeUndefined();
      expect((await t.store.libraries.list()).map((l) => l.id)).toEqual(["/zeta/lib", "/~team-1/private"]);
      expect((await t.store.libraries.bySource("git.example.test/zeta/lib")).map((l) => l.id)).toEqual(["/zeta/lib", "/~team-1/private"]);
      expect(await t.store.libraries.bySource("elsewhere")).toEqual([]);
      // An id taken: refused with the code the use cases answer for it (409), and the library is left as it was.
      const before = await t.store.libraries.find("/zeta/lib");
      await expectLdsError(t.store.libraries.create(newLibrary("/zeta/lib", { title: "other", sourceUrl: "https://elsewhere.test/zeta/lib", sourceKey: "elsewhere.test/zeta/lib" })), "source_conflict");
      expect(await t.store.libraries.find("/zeta/lib")).toEqual(before);
      expect(await t.store.libraries.list()).toHaveLength(2);
    });

    it("createWithJob writes the library, its options and its ingest job (with a sealed token) together", async () => {
      await t.store.libraries.createWithJob(newLibrary("/acme/widgets"), { branch: "dev", generateDocs: true }, { url: "https://git.example.test/acme/widgets", branch: "dev" }, "tok-1");
      expect(await t.store.libraries.find("/acme/widgets")).toMatchObject({ state: "queued" });
      expect(await t.store.libraries.options("/acme/widgets")).toEqual({ branch: "dev", generateDocs: true });
      const job = await t.store.jobs.claimNext(OWNER, LEASE_MS);
      expect(job).toMatchObject({ id: expect.any(Number), libraryId: "/acme/widgets", kind: "ingest", payload: { url: "https://git.example.test/acme/widgets", branch: "dev" } });
      expect(await t.store.jobs.token(job!.id)).toBe("tok-1");
    });

    it("createWithJob is all or nothing: over an existing library it fails and queues no job", async () => {
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      const before = await t.store.libraries.find("/acme/widgets");
      await expectLdsError(t.store.libraries.createWithJob(newLibrary("/acme/widgets", { title: "other" }), { branch: "x" }, { url: "u" }, "tok"), "source_conflict");
      expect(await t.store.jobs.hasQueued()).toBe(false);
      expect(await t.store.libraries.options("/acme/widgets")).toEqual({});
      expect(await t.store.libraries.find("/acme/widgets")).toEqual(before);
    });

    it("options are {} for a library submitted without any", async () => {
      await t.store.libraries.createWithJob(newLibrary("/acme/widgets"), null, { url: "u" });
      expect(await t.store.libraries.options("/acme/widgets")).toEqual({});
    });

    it("queueJob queues a job, and shows the library as queued only when asked", async () => {
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      await t.store.libraries.setState("/acme/widgets", "finalized");
      await t.store.libraries.queueJob("/acme/widgets", { kind: "ingest", payload: { url: "u", version: "v1", branch: "v1" } }, undefined, false);
      expect((await t.store.libraries.find("/acme/widgets"))!.state).toBe("finalized");
      expect(await t.store.jobs.hasPending("/acme/widgets", "v1")).toBe(true);
      await t.store.libraries.queueJob("/acme/widgets", { kind: "refresh", payload: { url: "u" } }, "tok-2", true);
      expect((await t.store.libraries.find("/acme/widgets"))!.state).toBe("queued");
      const [first, second] = [await t.store.jobs.claimNext(OWNER, LEASE_MS), await t.store.jobs.claimNext(OWNER, LEASE_MS)];
      expect([first!.kind, second!.kind]).toEqual(["ingest", "refresh"]);
      expect(await t.store.jobs.token(second!.id)).toBe("tok-2");
      expect(await t.store.jobs.token(first!.id)).toBeUndefined();
    });

    it("relocate moves the source, clears the served branch, keeps the options with the new branch, queues a refresh and audits the move", async () => {
      await t.store.libraries.createWithJob(newLibrary("/acme/widgets"), { generateDocs: true, branch: "old" }, { url: "u" });
      await t.store.jobs.finish((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.id, OWNER, null);
      await t.store.libraries.recordServedBranch("/acme/widgets", { name: "old", commit: "abc", fetchedAt: "2026-11-01T00:00:00.000Z" });
      await t.store.libraries.setState("/acme/widgets", "finalized");
      await t.store.libraries.relocate({
        libraryId: "/acme/widgets",
        sourceUrl: "https://new.test/acme/widgets",
        sourceKey: "new.test/acme/widgets",
        branch: "main",
        teamId: 7,
        actor: "admin",
        from: "https://git.example.test/acme/widgets",
      });
      expect(await t.store.libraries.find("/acme/widgets")).toMatchObject({ sourceUrl: "https://new.test/acme/widgets", sourceKey: "new.test/acme/widgets", branches: [], state: "queued" });
      expect(await t.store.libraries.servedBranches("/acme/widgets")).toEqual([]);
      expect(await t.store.libraries.options("/acme/widgets")).toEqual({ generateDocs: true, branch: "main" });
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toMatchObject({
        libraryId: "/acme/widgets",
        kind: "refresh",
        payload: { url: "https://new.test/acme/widgets", generateDocs: true, branch: "main", teamId: 7 },
      });
      expect((await t.store.audit.list(1))[0]).toMatchObject({
        actor: "admin",
        action: "library.move",
        subject: "/acme/widgets",
        details: { from: "https://git.example.test/acme/widgets", to: "https://new.test/acme/widgets", branch: "main" },
      });
      expect(await t.store.libraries.bySource("git.example.test/acme/widgets")).toEqual([]);
    });

    it("a library serves one branch: a new record replaces the last", async () => {
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      expect(await t.store.libraries.servedBranches("/acme/widgets")).toEqual([]);
      await t.store.libraries.recordServedBranch("/acme/widgets", { name: "main", commit: "c1", fetchedAt: "2026-11-01T00:00:00.000Z" });
      await t.store.libraries.recordServedBranch("/acme/widgets", { name: "dev", commit: "c2", fetchedAt: "2026-11-02T00:00:00.000Z" });
      expect(await t.store.libraries.servedBranches("/acme/widgets")).toEqual([{ name: "dev", commit: "c2", fetchedAt: "2026-11-02T00:00:00.000Z" }]);
      expect((await t.store.libraries.find("/acme/widgets"))!.branches).toEqual([{ name: "dev", commit: "c2", fetchedAt: "2026-11-02T00:00:00.000Z" }]);
    });

    it("sets a description, and a state with its reason (none when not given), moving updatedAt on", async () => {
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      const before = (await t.store.libraries.find("/acme/widgets"))!.updatedAt;
      await t.store.libraries.setDescription("/acme/widgets", "Widgets for everyone");
      await nextMillisecond();
      await t.store.libraries.setState("/acme/widgets", "failed", "repository_not_found: gone");
      const failed = (await t.store.libraries.find("/acme/widgets"))!;
      expect(failed).toMatchObject({ description: "Widgets for everyone", state: "failed", stateReason: "repository_not_found: gone" });
      expect(Date.parse(failed.updatedAt)).toBeGreaterThan(Date.parse(before));
      await t.store.libraries.setState("/acme/widgets", "fetching");
      expect(await t.store.libraries.find("/acme/widgets")).toMatchObject({ state: "fetching", stateReason: null });
    });

    it("remove is refused (library_busy) while a job of the library waits or runs, then deletes it with its versions, jobs, tokens and usage", async () => {
      await t.store.libraries.createWithJob(newLibrary("/acme/widgets"), null, { url: "u" }, "tok-gone");
      await t.store.libraries.create(newLibrary("/acme/kept"));
      await t.store.versions.record("/acme/widgets", { name: "v1", ref: "v1", commit: "c1" });
      await t.store.usage.add([{ libraryId: "/acme/widgets", day: "2026-11-01", dimension: "client", name: "api", count: 1 }]);
      await expectLdsError(t.store.libraries.remove("/acme/widgets"), "library_busy");
      const job = (await t.store.jobs.claimNext(OWNER, LEASE_MS))!;
      await expectLdsError(t.store.libraries.remove("/acme/widgets"), "library_busy");
      expect(await t.store.libraries.find("/acme/widgets")).toBeDefined();
      await t.store.jobs.finish(job.id, OWNER, "failed: stop");
      await t.store.libraries.queueJob("/acme/widgets", { kind: "refresh", payload: {} }, "tok-2", false);
      await t.store.jobs.finish((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.id, OWNER, null);
      expect(await t.store.libraries.remove("/acme/widgets")).toEqual([]);
      expect(await t.store.libraries.find("/acme/widgets")).toBeUndefined();
      expect(await t.store.versions.list("/acme/widgets")).toEqual([]);
      expect(await t.store.usage.read("/acme/widgets", "2000-01-01")).toEqual([]);
      expect(await t.store.jobs.hasAnyPending("/acme/widgets")).toBe(false);
      expect((await t.store.libraries.list()).map((l) => l.id)).toEqual(["/acme/kept"]);
    });

    it("remove takes the library's options with it: a library created again under its id has none", async () => {
      await t.store.libraries.createWithJob(newLibrary("/acme/widgets"), { branch: "dev", generateDocs: true }, { url: "u" });
      await t.store.jobs.finish((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.id, OWNER, null);
      await t.store.libraries.remove("/acme/widgets");
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      expect(await t.store.libraries.options("/acme/widgets")).toEqual({});
      await t.store.libraries.remove("/acme/widgets");
      await t.store.libraries.createWithJob(newLibrary("/acme/widgets"), null, { url: "u" });
      expect(await t.store.libraries.options("/acme/widgets")).toEqual({});
    });

    it("hands out copies: changing a record read does not change what is stored", async () => {
      await t.store.libraries.createWithJob(newLibrary("/acme/widgets"), { branch: "main" }, { url: "u" });
      await t.store.libraries.recordServedBranch("/acme/widgets", { name: "main", commit: "c1", fetchedAt: "2026-11-01T00:00:00.000Z" });
      const read = (await t.store.libraries.find("/acme/widgets"))!;
      read.branches[0]!.commit = "changed";
      read.state = "failed";
      (await t.store.libraries.options("/acme/widgets")).branch = "changed";
      (await t.store.libraries.servedBranches("/acme/widgets"))[0]!.name = "changed";
      const job = (await t.store.jobs.claimNext(OWNER, LEASE_MS))!;
      (job.payload as { url?: string }).url = "changed";
      expect(await t.store.libraries.find("/acme/widgets")).toMatchObject({ state: "queued", branches: [{ name: "main", commit: "c1" }] });
      expect(await t.store.libraries.options("/acme/widgets")).toEqual({ branch: "main" });
      await t.store.jobs.requeueRunningAsSoleProcess();
      expect((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.payload).toEqual({ url: "u" });
    });

    it("redirect answers a library's new id for an old one, undefined otherwise", async () => {
      await t.store.libraries.create(newLibrary("/~team-1/widgets"));
      await t.seed.redirect("/team-1/widgets", "/~team-1/widgets");
      expect(await t.store.libraries.redirect("/team-1/widgets")).toBe("/~team-1/widgets");
      expect(await t.store.libraries.redirect("/~team-1/widgets")).toBeUndefined();
      expect(await t.store.libraries.redirect("/nobody/here")).toBeUndefined();
    });
  });

  describe("versions", () => {
    const t = freshStore(open);

    it("records pinned versions (a second record of a name replaces it), lists them by name and names them by name or newest first", async () => {
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      await t.store.libraries.create(newLibrary("/acme/other"));
      expect(await t.store.versions.list("/acme/widgets")).toEqual([]);
      expect(await t.store.versions.commit("/acme/widgets", "v1")).toBeUndefined();
      for (const [name, commit] of [
        ["v2", "c2"],
        ["v1", "c1"],
        ["v3", "c3"],
      ] as const) {
        await t.store.versions.record("/acme/widgets", { name, ref: `refs/tags/${name}`, commit });
        await nextMillisecond();
      }
      await t.store.versions.record("/acme/other", { name: "v9", ref: "v9", commit: "c9" });
      expect(await t.store.versions.list("/acme/widgets")).toEqual([
        { name: "v1", ref: "refs/tags/v1" },
        { name: "v2", ref: "refs/tags/v2" },
        { name: "v3", ref: "refs/tags/v3" },
      ]);
      expect(await t.store.versions.names("/acme/widgets")).toEqual(["v1", "v2", "v3"]);
      expect(await t.store.versions.names("/acme/widgets", "name")).toEqual(["v1", "v2", "v3"]);
      expect(await t.store.versions.names("/acme/widgets", "newest")).toEqual(["v3", "v1", "v2"]);
      expect(await t.store.versions.commit("/acme/widgets", "v1")).toBe("c1");
      // Indexing v2 again makes it the newest, at its new commit and ref.
      await t.store.versions.record("/acme/widgets", { name: "v2", ref: "release/2", commit: "c2b" });
      expect(await t.store.versions.names("/acme/widgets", "newest")).toEqual(["v2", "v3", "v1"]);
      expect(await t.store.versions.commit("/acme/widgets", "v2")).toBe("c2b");
      expect((await t.store.versions.list("/acme/widgets")).find((v) => v.name === "v2")).toEqual({ name: "v2", ref: "release/2" });
      expect(await t.store.versions.names("/acme/other")).toEqual(["v9"]);
    });
  });
}

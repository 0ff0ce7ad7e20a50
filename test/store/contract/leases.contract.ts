import { describe, expect, it } from "vitest";
import { ABANDONED_JOB_REASON, MAX_JOB_ATTEMPTS } from "../../../src/store/record-values.js";
import type { ClaimedJob } from "../../../src/store/records.js";
import { expectLdsError, freshStore, LEASE_MS, OWNER, until, type OpenStore } from "./harness.js";
import { newLibrary } from "./libraries.contract.js";
import { append, publish, snippet } from "./snippets.contract.js";

/** A lease short enough to let pass in a test: claims made with it expire while the test waits for that. */
const SHORT_MS = 300;
const OTHER = "host-b:200:bbbb";

/**
 * Job leases (several replicas on one database): a claim holds its job for a lease that heartbeats renew; another
 * runner takes over a job whose lease passed; what the old holder writes afterwards (finish, a publication) is
 * refused; one job per library version runs at a time; a job that used up its attempts is failed.
 */
export function describeLeases(open: OpenStore): void {
  describe("job leases", () => {
    const t = freshStore(open);
    const queue = async (libraryId = "/acme/widgets", version?: string) => {
      if (!(await t.store.libraries.find(libraryId))) await t.store.libraries.create(newLibrary(libraryId));
      return t.store.jobs.enqueue({ libraryId, kind: "ingest", payload: version === undefined ? { url: "u" } : { url: "u", version } });
    };
    /** The job, claimed by `owner` once its lease (a short one) has passed. */
    const reclaimedBy = (owner: string, jobId: number, leaseMs = SHORT_MS) => until(async () => ((await t.store.jobs.claimNext(owner, leaseMs))?.id === jobId ? true : undefined));

    it("a claim records its owner, a lease from now and the attempt", async () => {
      const id = await queue();
      const before = new Date().toISOString();
      const job = (await t.store.jobs.claimNext(OWNER, LEASE_MS))!;
      expect(job).toMatchObject({ id, leaseOwner: OWNER, attempts: 1 });
      expect(job.leaseUntil).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const untilMs = Date.parse(job.leaseUntil);
      expect(untilMs).toBeGreaterThanOrEqual(Date.parse(before) + LEASE_MS - 1_000);
      expect(untilMs).toBeLessThanOrEqual(Date.now() + LEASE_MS + 1_000);
    });

    it("a live lease is not reclaimed; an expired one is, by another owner, as the job's second attempt", async () => {
      const id = await queue();
      await t.store.jobs.claimNext(OWNER, SHORT_MS);
      expect(await t.store.jobs.claimNext(OTHER, LEASE_MS)).toBeUndefined();
      let taken: ClaimedJob | undefined;
      await until(async () => (taken = await t.store.jobs.claimNext(OTHER, LEASE_MS)));
      expect(taken).toMatchObject({ id, leaseOwner: OTHER, attempts: 2 });
      // The first owner's lease is gone: renewals and its finish are refused, and the job runs on under OTHER.
      expect(await t.store.jobs.renewLease(id, OWNER, LEASE_MS)).toBe(false);
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toBeUndefined();
    });

    it("renewLease extends the owner's lease and answers false to anyone else", async () => {
      const id = await queue();
      await t.store.jobs.claimNext(OWNER, SHORT_MS);
      expect(await t.store.jobs.renewLease(id, OTHER, LEASE_MS)).toBe(false);
      expect(await t.store.jobs.renewLease(id, OWNER, LEASE_MS)).toBe(true);
      // Renewed for a minute: well past the first lease, nobody else can take it.
      const waitedUntil = Date.now() + SHORT_MS * 2;
      await until(async () => Date.now() > waitedUntil);
      expect(await t.store.jobs.claimNext(OTHER, LEASE_MS)).toBeUndefined();
      expect(await t.store.jobs.finish(id, OWNER, null)).toBe(true);
      expect(await t.store.jobs.renewLease(id, OWNER, LEASE_MS)).toBe(false);
    });

    it("giveBack (a clean stop) queues the job again at once, its attempts as before that claim; a non-holder's changes nothing", async () => {
      await t.store.libraries.create(newLibrary("/acme/widgets"));
      const id = await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { url: "u" } }, "tok");
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toMatchObject({ id, attempts: 1 });
      expect(await t.store.jobs.giveBack(id, OTHER)).toBe(false);
      expect(await t.store.jobs.hasQueued()).toBe(false);
      expect(await t.store.jobs.giveBack(id, OWNER)).toBe(true);
      // Queued, its token kept, no longer the old holder's: claimable at once (no lease to wait out), as attempt 1.
      expect(await t.store.jobs.hasQueued()).toBe(true);
      expect(await t.store.jobs.token(id)).toBe("tok");
      expect(await t.store.jobs.renewLease(id, OWNER, LEASE_MS)).toBe(false);
      expect(await t.store.jobs.finish(id, OWNER, null)).toBe(false);
      expect(await t.store.jobs.giveBack(id, OWNER)).toBe(false);
      expect(await t.store.jobs.claimNext(OTHER, LEASE_MS)).toMatchObject({ id, leaseOwner: OTHER, attempts: 1 });
      // More clean stops than MAX_JOB_ATTEMPTS (rolling restarts) never use the job's attempts up.
      for (let stop = 0; stop <= MAX_JOB_ATTEMPTS; stop++) {
        expect(await t.store.jobs.giveBack(id, OTHER)).toBe(true);
        expect(await t.store.jobs.claimNext(OTHER, LEASE_MS)).toMatchObject({ id, attempts: 1 });
      }
    });

    it("a lease that passed still counts after a clean stop: the job given back keeps the attempt its reclaim followed", async () => {
      const id = await queue();
      await t.store.jobs.claimNext(OWNER, SHORT_MS);
      const reclaimed = (await reclaimedBy(OTHER, id, LEASE_MS)) && (await t.store.jobs.renewLease(id, OTHER, LEASE_MS));
      expect(reclaimed).toBe(true);
      expect(await t.store.jobs.giveBack(id, OTHER)).toBe(true);
      expect(await t.store.jobs.claimNext(OWNER, LEASE_MS)).toMatchObject({ id, leaseOwner: OWNER, attempts: 2 });
      expect(await t.store.jobs.finish(id, OWNER, null)).toBe(true);
    });

    it("finish by a runner that does not hold the lease changes nothing and says so", async () => {
      const widgets = await queue("/acme/widgets");
      await t.store.jobs.claimNext(OWNER, SHORT_MS);
      await reclaimedBy(OTHER, widgets, LEASE_MS);
      expect(await t.store.jobs.finish(widgets, OWNER, "failed: the old holder")).toBe(false);
      // The job still runs under OTHER: not finished, not queued again.
      expect(await t.store.jobs.hasPending("/acme/widgets", "")).toBe(true);
      expect(await t.store.jobs.hasQueued()).toBe(false);
      expect(await t.store.jobs.renewLease(widgets, OTHER, LEASE_MS)).toBe(true);
      // A job with a token, held by OWNER: OTHER's finish leaves it running with its token.
      await t.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { version: "v1" } }, "tok");
      const pinned = (await t.store.jobs.claimNext(OWNER, LEASE_MS))!;
      expect(await t.store.jobs.finish(pinned.id, OTHER, null)).toBe(false);
      expect(await t.store.jobs.token(pinned.id)).toBe("tok");
      expect(await t.store.jobs.hasPending("/acme/widgets", "v1")).toBe(true);
      expect(await t.store.jobs.finish(widgets, OTHER, null)).toBe(true);
      expect(await t.store.jobs.hasPending("/acme/widgets", "")).toBe(false);
      expect(await t.store.jobs.finish(widgets, OTHER, null)).toBe(false);
    });

    it("runs one job per library version at a time: the next of that version waits, other versions and libraries do not", async () => {
      const first = await queue("/acme/widgets");
      const second = await queue("/acme/widgets");
      const pinned = await queue("/acme/widgets", "v1");
      const other = await queue("/acme/gadgets");
      expect((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.id).toBe(first);
      expect((await t.store.jobs.claimNext(OTHER, LEASE_MS))!.id).toBe(pinned);
      expect((await t.store.jobs.claimNext(OTHER, LEASE_MS))!.id).toBe(other);
      expect(await t.store.jobs.claimNext(OTHER, LEASE_MS)).toBeUndefined();
      await t.store.jobs.finish(first, OWNER, null);
      expect((await t.store.jobs.claimNext(OTHER, LEASE_MS))!.id).toBe(second);
    });

    it(`a job reclaimed after ${MAX_JOB_ATTEMPTS} attempts is failed with the reason, its library too, and the next job is taken`, async () => {
      const doomed = await queue("/acme/widgets");
      const after = await queue("/acme/widgets");
      const next = await queue("/acme/gadgets");
      expect((await t.store.jobs.claimNext("runner-1", SHORT_MS))!.id).toBe(doomed);
      // Each runner dies holding it: the next takes it over once the lease has passed (the gadgets job meanwhile).
      expect((await t.store.jobs.claimNext("runner-0", LEASE_MS))!.id).toBe(next);
      for (let attempt = 2; attempt <= MAX_JOB_ATTEMPTS; attempt++) await reclaimedBy(`runner-${attempt}`, doomed);
      await t.store.libraries.setState("/acme/widgets", "fetching");
      // The last lease passes: the next claim fails the job and takes the one queued after it (same version).
      const taken = await until(async () => t.store.jobs.claimNext("runner-last", LEASE_MS));
      expect(taken).toMatchObject({ id: after, attempts: 1, leaseOwner: "runner-last" });
      expect(await t.store.jobs.finish(doomed, `runner-${MAX_JOB_ATTEMPTS}`, null)).toBe(false);
      expect(await t.store.libraries.find("/acme/widgets")).toMatchObject({ state: "failed", stateReason: ABANDONED_JOB_REASON });
      expect(ABANDONED_JOB_REASON).toMatch(/^job_abandoned: .*3 times/);
    });

    it("publishBatch with a lease publishes while it holds, and refuses (lease_lost) once another runner took the job: the old batch stays served", async () => {
      const lib = "/acme/widgets";
      const id = await queue(lib);
      const served = await publish(t.store, lib, "", [snippet(1)]);
      await t.store.jobs.claimNext(OWNER, SHORT_MS);
      const batch = await t.store.snippets.openBatch(lib, "");
      await append(t.store, lib, "", batch, [snippet(2)]);
      await reclaimedBy(OTHER, id, LEASE_MS);
      await expectLdsError(t.store.snippets.publishBatch(lib, "", batch, { jobId: id, owner: OWNER }), "lease_lost");
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(served.batch);
      expect(await t.store.snippets.count(lib, "")).toBe(1);
      // The holder publishes its own batch.
      const own = await t.store.snippets.openBatch(lib, "");
      await append(t.store, lib, "", own, [snippet(3), snippet(4)]);
      await t.store.snippets.publishBatch(lib, "", own, { jobId: id, owner: OTHER });
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(own);
    });

    it("publishBatch refuses a lease that has passed even when nobody took the job over", async () => {
      const lib = "/acme/widgets";
      const id = await queue(lib);
      await t.store.jobs.claimNext(OWNER, SHORT_MS);
      const batch = await t.store.snippets.openBatch(lib, "");
      await append(t.store, lib, "", batch, [snippet(1)]);
      const passed = Date.now() + SHORT_MS + 50;
      await until(async () => Date.now() > passed);
      await expectLdsError(t.store.snippets.publishBatch(lib, "", batch, { jobId: id, owner: OWNER }), "lease_lost");
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(0);
    });

    it("retireAbandonedBatches retires unfinished batches no live lease covers and keeps those whose job's lease lives", async () => {
      const held = await queue("/acme/widgets");
      await queue("/acme/gadgets", "v2");
      await t.store.libraries.create(newLibrary("/acme/orphan"));
      expect((await t.store.jobs.claimNext(OWNER, LEASE_MS))!.id).toBe(held);
      await t.store.jobs.claimNext(OWNER, SHORT_MS);
      const kept = await t.store.snippets.openBatch("/acme/widgets", "");
      const orphan = await t.store.snippets.openBatch("/acme/orphan", "");
      const expired = await t.store.snippets.openBatch("/acme/gadgets", "v2");
      // A batch of a version no job of which runs (widgets v9) goes too.
      const otherVersion = await t.store.snippets.openBatch("/acme/widgets", "v9");
      const passed = Date.now() + SHORT_MS + 50;
      await until(async () => Date.now() > passed);
      expect(await t.store.snippets.retireAbandonedBatches()).toBe(3);
      expect(await t.store.snippets.retireAbandonedBatches()).toBe(0);
      await append(t.store, "/acme/widgets", "", kept, [snippet(1)]);
      await t.store.snippets.publishBatch("/acme/widgets", "", kept, { jobId: held, owner: OWNER });
      for (const [lib, version, batch] of [
        ["/acme/orphan", "", orphan],
        ["/acme/gadgets", "v2", expired],
        ["/acme/widgets", "v9", otherVersion],
      ] as const)
        await expectLdsError(append(t.store, lib, version, batch, [snippet(2)]), "ingestion_superseded");
    });
  });
}

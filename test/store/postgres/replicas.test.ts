import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";
import { newLibrary } from "../contract/libraries.contract.js";

// Replicas are separate pools (as separate processes have) on one database: what they do at the same moment.
let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

let database: TestDatabase;
let replicas: PostgresStore[] = [];
afterEach(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  replicas = [];
  await database?.drop();
});

async function openReplicas(n: number): Promise<PostgresStore[]> {
  database = await server.newDatabase();
  const key = randomBytes(32);
  replicas = await Promise.all(Array.from({ length: n }, () => openPostgresStore({ settings: { url: database.url, max: 5 } }, key)));
  return replicas;
}

it("three replicas claiming at once, five claims each at a time, take each of 60 jobs exactly once", async () => {
  const [a, b, c] = await openReplicas(3);
  await a!.store.libraries.create(newLibrary("/acme/widgets"));
  const queued = [];
  // One version each: one running job per library version would otherwise hold the rest back.
  for (let i = 0; i < 60; i++) queued.push(await a!.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { url: `u${i}`, version: `v${i}` } }));
  const claimer = async (replica: PostgresStore, owner: string) => {
    const taken: number[] = [];
    for (let job = await replica.store.jobs.claimNext(owner, 60_000); job; job = await replica.store.jobs.claimNext(owner, 60_000)) taken.push(job.id);
    return taken;
  };
  const claims = (await Promise.all([a, b, c].flatMap((r, n) => Array.from({ length: 5 }, () => claimer(r!, `replica-${n}`))))).flat();
  expect(claims).toHaveLength(60);
  expect([...claims].sort((x, y) => x - y)).toEqual(queued);
  expect(await b!.store.jobs.hasQueued()).toBe(false);
});

it("three replicas × four claimers run 200 jobs of 8 library versions: each job once, never two of one version at a time", async () => {
  const replicas = await openReplicas(3);
  const [a] = replicas;
  for (const id of ["/acme/widgets", "/acme/gadgets"]) await a!.store.libraries.create(newLibrary(id));
  const versions = ["", "v1", "v2", "v3"];
  const queued: number[] = [];
  for (let i = 0; i < 200; i++) {
    const libraryId = i % 2 ? "/acme/widgets" : "/acme/gadgets";
    const version = versions[Math.floor(i / 2) % versions.length]!;
    queued.push(await a!.store.jobs.enqueue({ libraryId, kind: "ingest", payload: version ? { url: "u", version } : { url: "u" } }));
  }
  // What runs now, as the claimers see it: a job counts as running from its claim until just before its finish, so
  // a second claim of its version answering meanwhile breaks the rule (the store answers it only after that finish).
  const running = new Map<string, number>();
  const overlaps: string[] = [];
  const claimed: number[] = [];
  const claimer = async (replica: PostgresStore, owner: string) => {
    for (;;) {
      const job = await replica.store.jobs.claimNext(owner, 30_000);
      if (!job) {
        if (!(await replica.store.jobs.hasQueued())) return;
        continue;
      }
      claimed.push(job.id);
      const key = `${job.libraryId} ${"version" in job.payload ? (job.payload.version ?? "") : ""}`;
      if (running.has(key)) overlaps.push(`${key}: job ${job.id} while ${running.get(key)}`);
      running.set(key, job.id);
      // The job's "work": a heartbeat, a round trip to the database other claims interleave with.
      expect(await replica.store.jobs.renewLease(job.id, owner, 30_000)).toBe(true);
      running.delete(key);
      expect(await replica.store.jobs.finish(job.id, owner, null)).toBe(true);
    }
  };
  await Promise.all(replicas.flatMap((r, n) => Array.from({ length: 4 }, (_, k) => claimer(r, `replica-${n}:${k}`))));
  expect(overlaps).toEqual([]);
  expect([...claimed].sort((x, y) => x - y)).toEqual(queued);
  const states = await server.asSuperuser(database.name, async (c) => (await c.query("SELECT state, attempts, count(*)::int AS n FROM jobs GROUP BY state, attempts")).rows);
  expect(states).toEqual([{ state: "done", attempts: 1, n: 200 }]);
});

it("batches opened by two replicas at once get distinct numbers, and only the last opened of a version can be published", async () => {
  const [a, b] = await openReplicas(2);
  for (const id of ["/acme/one", "/acme/two", "/acme/three"]) await a!.store.libraries.create(newLibrary(id));
  const opened = await Promise.all(
    ["/acme/one", "/acme/two", "/acme/three"].flatMap((id) => [a!.store.snippets.openBatch(id, ""), b!.store.snippets.openBatch(id, "v1"), b!.store.snippets.openBatch(id, "v2")]),
  );
  expect(new Set(opened).size).toBe(9);
  // Two ingestions of one version at once: one batch stays open, the other is retired.
  const [first, second] = await Promise.all([a!.store.snippets.openBatch("/acme/one", "v9"), b!.store.snippets.openBatch("/acme/one", "v9")]);
  const outcomes = await Promise.allSettled([a!.store.snippets.publishBatch("/acme/one", "v9", first!), b!.store.snippets.publishBatch("/acme/one", "v9", second!)]);
  expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
  expect(outcomes.find((o) => o.status === "rejected")).toMatchObject({ reason: { code: "ingestion_superseded" } });
});

it("usage added by two replicas at once keeps the cap of distinct names a day, and adds every count of a name", async () => {
  const [a, b] = await openReplicas(2);
  const count = (name: string, n = 1) => ({ libraryId: "/acme/widgets", day: "2026-11-01", dimension: "client" as const, name, count: n });
  await Promise.all([
    ...Array.from({ length: 8 }, (_, i) => a!.store.usage.add([count(`a-${i}`), count("shared", 2)])),
    ...Array.from({ length: 8 }, (_, i) => b!.store.usage.add([count(`b-${i}`), count("shared", 3)])),
  ]);
  const read = await a!.store.usage.read("/acme/widgets", "2026-11-01");
  expect(read).toHaveLength(10);
  expect(read.find((u) => u.name === "shared")!.count).toBe(8 * 2 + 8 * 3);
});

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
  for (let i = 0; i < 60; i++) queued.push(await a!.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { url: `u${i}` } }));
  const claimer = async (replica: PostgresStore) => {
    const taken: number[] = [];
    for (let job = await replica.store.jobs.claimNext(); job; job = await replica.store.jobs.claimNext()) taken.push(job.id);
    return taken;
  };
  const claims = (await Promise.all([a, b, c].flatMap((r) => Array.from({ length: 5 }, () => claimer(r!))))).flat();
  expect(claims).toHaveLength(60);
  expect([...claims].sort((x, y) => x - y)).toEqual(queued);
  expect(await b!.store.jobs.hasQueued()).toBe(false);
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

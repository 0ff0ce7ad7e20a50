import { randomBytes } from "node:crypto";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { startSearchReplica, type SearchReplica } from "../../../src/engine/postgres/search-replica.js";
import type { IndexBatch } from "../../../src/index/search-index.js";
import { openPool } from "../../../src/store/postgres/pool.js";
import { openPostgresStore, type PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { NewSnippet } from "../../../src/store/records.js";
import type { Store } from "../../../src/store/store.js";
import { createHashingEmbedder } from "../../../src/vectors/embedder.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { inlineSnippetWriter } from "../../../src/volume/snippet-writer.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";
import { tempDir } from "../../helpers/temp.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";

// Replicas' search files followed from PostgreSQL: real files in temporary data directories, a real cluster.
// Notices only (the poll set to an hour) unless a test says otherwise, so that what it waits for is the notice's.
const embedder = createHashingEmbedder();
const HOUR = 3_600_000;
let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

let database: TestDatabase;
let records: PostgresStore;
let pools: pg.Pool[] = [];
let replicas: SearchReplica[] = [];
beforeEach(async () => {
  database = await server.newDatabase();
  records = await openPostgresStore({ settings: { url: database.url } }, randomBytes(32));
});
afterEach(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  await Promise.all(pools.map((p) => p.end()));
  replicas = [];
  pools = [];
  await records?.close();
  await database?.drop();
});

async function replica(dataDir = tempDir(), pollMs = HOUR): Promise<SearchReplica> {
  const pool = openPool({ url: database.url, max: 3 });
  pools.push(pool);
  const started = await startSearchReplica({ pool, url: database.url, dataDir, embedder, pollMs });
  replicas.push(started);
  return started;
}

const TOPICS = ["cache", "router", "config", "plugin", "stream", "parser", "logger", "queue"];
function rows(library: string, count: number, seed = 0): NewSnippet[] {
  return Array.from({ length: count }, (_, i) => {
    const topic = TOPICS[(i * 3 + seed) % TOPICS.length]!;
    const other = TOPICS[(i + seed) % TOPICS.length]!;
    return {
      kind: i % 2 ? "code" : "info",
      title: `${topic} ${i}`,
      description: `How the ${topic} works with the ${other}`,
      language: i % 2 ? "ts" : null,
      content: `${library} ${topic} ${topic} ${other} example ${i} ${"word ".repeat(i % 5)}`,
      sourcePath: `docs/${topic}.md#${i}`,
      tokens: 10 + i,
      pageTitle: null,
    };
  });
}

/** Publish `rows` as a new batch of a library version through a store, rows and vectors in chunks as an ingestion writes them. */
async function publish(store: Store, libraryId: string, version: string, snippets: NewSnippet[]): Promise<{ batch: IndexBatch; ids: number[] }> {
  const batch = await store.snippets.openBatch(libraryId, version);
  const ids: number[] = [];
  for (let i = 0; i < snippets.length; i += 40) {
    const chunk = snippets.slice(i, i + 40);
    ids.push(...(await store.snippets.appendToBatch(libraryId, version, batch, chunk, await embedder.embed(chunk.map((s) => `${s.title}\n${s.content}`)))));
  }
  await store.snippets.publishBatch(libraryId, version, batch);
  return { batch: { libraryId, version, batch }, ids };
}

/** The ids a replica's words ranking answers for a batch (the condition waited for: the batch is held). */
const ranked = async (r: SearchReplica, batch: IndexBatch, words = ["cache"]) => (await r.index.rank(batch, words, 100)).map((hit) => hit.id);

it("a batch published through the store reaches both replicas by its notice, and they rank as a SQLite volume holding the same rows", async () => {
  const [a, b] = [await replica(), await replica()];
  await records.store.libraries.create(newLibrary("/acme/widgets"));
  const snippets = rows("/acme/widgets", 120);
  const { batch, ids } = await publish(records.store, "/acme/widgets", "", snippets);
  await expect.poll(() => ranked(b, batch), { timeout: 10_000 }).not.toEqual([]);
  await expect.poll(() => ranked(a, batch), { timeout: 10_000 }).not.toEqual([]);
  expect(b.lag()).toMatchObject({ batches: 0, oldestMs: null, listening: true, caughtUp: true });

  // The same rows and vectors written to a SQLite volume (a fresh one: the same ids, 1 to 120, as this database's).
  const volume = await openVolume(tempDir(), embedder);
  try {
    await volume.store.libraries.create(newLibrary("/acme/widgets"));
    const local = await volume.store.snippets.openBatch("/acme/widgets", "");
    const writer = inlineSnippetWriter(volume.store, volume.index);
    const target = { libraryId: "/acme/widgets", version: "", batch: local };
    const localIds = await writer.append(target, snippets, await embedder.embed(snippets.map((s) => `${s.title}\n${s.content}`)));
    await volume.store.snippets.publishBatch("/acme/widgets", "", local);
    expect(localIds).toEqual(ids);

    for (const words of [["cache"], ["router", "stream"], ["parser", "logger", "example"]]) {
      const mirrored = await b.index.rank(batch, words, 30);
      expect(mirrored.length).toBeGreaterThan(0);
      expect(mirrored).toEqual(await volume.index.rank(target, words, 30));
    }
    for (const text of ["cache router", "stream parser example 7"]) {
      const [query] = await embedder.embed([text]);
      const mirrored = await b.index.nearest(query!, 15, [batch]);
      expect(mirrored.map((m) => m.id)).toEqual((await volume.index.nearest(query!, 15, [target])).map((m) => m.id));
    }
  } finally {
    volume.close();
  }
});

it("a republished library version replaces the old batch in the files; a removed library leaves them", async () => {
  const r = await replica();
  for (const id of ["/acme/widgets", "/acme/gadgets"]) await records.store.libraries.create(newLibrary(id));
  const first = await publish(records.store, "/acme/widgets", "v1", rows("/acme/widgets", 30));
  const gadgets = await publish(records.store, "/acme/gadgets", "", rows("/acme/gadgets", 10));
  await expect.poll(() => ranked(r, first.batch), { timeout: 10_000 }).not.toEqual([]);
  await expect.poll(() => ranked(r, gadgets.batch), { timeout: 10_000 }).not.toEqual([]);

  const second = await publish(records.store, "/acme/widgets", "v1", rows("/acme/widgets", 20, 3));
  await expect.poll(() => r.index.firstWithoutVector(first.ids), { timeout: 10_000 }).toBe(first.ids[0]);
  expect(await ranked(r, second.batch)).not.toEqual([]);
  expect((await ranked(r, second.batch)).every((id) => second.ids.includes(id))).toBe(true);
  expect(await r.index.firstWithoutVector(second.ids)).toBeUndefined();

  await records.store.libraries.remove("/acme/gadgets");
  await expect.poll(() => ranked(r, gadgets.batch), { timeout: 10_000 }).toEqual([]);
  expect((await r.index.statistics()).vectors).toBe(20);
});

it("ensureLive fetches a live batch not held yet before it answers; callers share the fetch; a batch no longer live is not fetched", async () => {
  const r = await replica();
  await records.store.libraries.create(newLibrary("/acme/widgets"));
  const { batch, ids } = await publish(records.store, "/acme/widgets", "", rows("/acme/widgets", 300));
  // Whether the notice's catch-up started first or not, once ensureLive answers the batch is served here.
  await Promise.all([r.ensureLive("/acme/widgets", "", batch.batch), r.ensureLive("/acme/widgets", "", batch.batch)]);
  expect(await r.index.firstWithoutVector(ids)).toBeUndefined();
  expect((await ranked(r, batch)).every((id) => ids.includes(id))).toBe(true);
  expect(r.lag().batches).toBe(0);

  const next = await publish(records.store, "/acme/widgets", "", rows("/acme/widgets", 5, 1));
  await r.ensureLive("/acme/widgets", "", batch.batch); // replaced meanwhile: nothing to fetch
  await r.ensureLive("/acme/widgets", "", next.batch.batch);
  expect(await r.index.firstWithoutVector(next.ids)).toBeUndefined();
  await expect.poll(() => r.index.firstWithoutVector(ids), { timeout: 10_000 }).toBe(ids[0]);
});

it("a replica closed while batches were published and a library removed catches up when it starts again", async () => {
  const dataDir = tempDir();
  const first = await replica(dataDir);
  for (const id of ["/acme/widgets", "/acme/gadgets"]) await records.store.libraries.create(newLibrary(id));
  const old = await publish(records.store, "/acme/widgets", "", rows("/acme/widgets", 25));
  const gadgets = await publish(records.store, "/acme/gadgets", "", rows("/acme/gadgets", 8));
  await first.ensureLive("/acme/widgets", "", old.batch.batch);
  await first.ensureLive("/acme/gadgets", "", gadgets.batch.batch);
  await first.close();
  replicas = replicas.filter((x) => x !== first);

  const current = await publish(records.store, "/acme/widgets", "", rows("/acme/widgets", 12, 5));
  const added = await publish(records.store, "/acme/widgets", "v2", rows("/acme/widgets", 7, 2));
  await records.store.libraries.remove("/acme/gadgets");

  const again = await replica(dataDir);
  // Caught up when started: no waiting.
  expect(again.lag()).toMatchObject({ batches: 0, caughtUp: true });
  expect(await again.index.firstWithoutVector([...current.ids, ...added.ids])).toBeUndefined();
  expect(await again.index.firstWithoutVector(old.ids)).toBe(old.ids[0]);
  expect(await ranked(again, gadgets.batch)).toEqual([]);
  expect((await again.index.statistics()).vectors).toBe(12 + 7);
});

it("a listening connection killed by the server: the follower connects again and catches up, with the poll an hour away", async () => {
  const r = await replica();
  await expect.poll(() => r.lag().listening, { timeout: 10_000 }).toBe(true);
  const killed = await server.asSuperuser(database.name, async (client) => {
    const { rows: found } = await client.query<{ ok: boolean }>("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [database.name]);
    return found.length;
  });
  expect(killed).toBe(1);
  await records.store.libraries.create(newLibrary("/acme/widgets"));
  const { batch, ids } = await publish(records.store, "/acme/widgets", "", rows("/acme/widgets", 15));
  await expect.poll(() => ranked(r, batch), { timeout: 15_000 }).not.toEqual([]);
  expect(await r.index.firstWithoutVector(ids)).toBeUndefined();
  await expect.poll(() => r.lag().listening, { timeout: 10_000 }).toBe(true);
});

it("a change no notice announced (published by SQL of its own) is found by the poll", async () => {
  const r = await replica(tempDir(), 200);
  await records.store.libraries.create(newLibrary("/acme/widgets"));
  const batch = await records.store.snippets.openBatch("/acme/widgets", "");
  const snippets = rows("/acme/widgets", 9);
  const ids = await records.store.snippets.appendToBatch("/acme/widgets", "", batch, snippets, await embedder.embed(snippets.map((s) => s.content)));
  await server.asSuperuser(database.name, (client) => client.query("UPDATE snippet_batches SET state = 'live' WHERE batch = $1", [batch]));
  await expect.poll(() => ranked(r, { libraryId: "/acme/widgets", version: "", batch }), { timeout: 10_000 }).not.toEqual([]);
  expect(await r.index.firstWithoutVector(ids)).toBeUndefined();
});

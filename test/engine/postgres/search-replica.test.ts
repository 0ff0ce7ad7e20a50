import { expect, it } from "vitest";
import { openVolume } from "../../../src/volume/open-volume.js";
import { inlineSnippetWriter } from "../../../src/volume/snippet-writer.js";
import { tempDir } from "../../helpers/temp.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { embedder, embeddedText, publish, ranked, replicaWorld, rows } from "./replica-fixtures.js";

// Replicas following PostgreSQL's live batches into their search files: arrival, replacement, ensureLive, catch-up.
const world = replicaWorld();

it("a batch published through the store reaches both replicas by its notice, and they rank as a SQLite volume holding the same rows", async () => {
  const [a, b] = [await world.replica(), await world.replica()];
  await world.records.store.libraries.create(newLibrary("/acme/widgets"));
  const snippets = rows("/acme/widgets", 120);
  const { batch, ids } = await publish(world.records.store, "/acme/widgets", "", snippets);
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
    const localIds = await writer.append(target, snippets, await embedder.embed(snippets.map(embeddedText)));
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
  const r = await world.replica();
  for (const id of ["/acme/widgets", "/acme/gadgets"]) await world.records.store.libraries.create(newLibrary(id));
  const first = await publish(world.records.store, "/acme/widgets", "v1", rows("/acme/widgets", 30));
  const gadgets = await publish(world.records.store, "/acme/gadgets", "", rows("/acme/gadgets", 10));
  await expect.poll(() => ranked(r, first.batch), { timeout: 10_000 }).not.toEqual([]);
  await expect.poll(() => ranked(r, gadgets.batch), { timeout: 10_000 }).not.toEqual([]);

  const second = await publish(world.records.store, "/acme/widgets", "v1", rows("/acme/widgets", 20, 3));
  await expect.poll(() => r.index.firstWithoutVector(first.ids), { timeout: 10_000 }).toBe(first.ids[0]);
  expect(await ranked(r, second.batch)).not.toEqual([]);
  expect((await ranked(r, second.batch)).every((id) => second.ids.includes(id))).toBe(true);
  expect(await r.index.firstWithoutVector(second.ids)).toBeUndefined();

  await world.records.store.libraries.remove("/acme/gadgets");
  await expect.poll(() => ranked(r, gadgets.batch), { timeout: 10_000 }).toEqual([]);
  expect((await r.index.statistics()).vectors).toBe(20);
});

it("ensureLive fetches a live batch not held yet before it answers (two callers at once), then the batch that replaces it, and the replaced one leaves", async () => {
  const r = await world.replica();
  await world.records.store.libraries.create(newLibrary("/acme/widgets"));
  const { batch, ids } = await publish(world.records.store, "/acme/widgets", "", rows("/acme/widgets", 300));
  // Whether the notice's catch-up started first or not, once ensureLive answers the batch is served here.
  await Promise.all([r.ensureLive("/acme/widgets", "", batch.batch), r.ensureLive("/acme/widgets", "", batch.batch)]);
  expect(await r.index.firstWithoutVector(ids)).toBeUndefined();
  expect((await ranked(r, batch)).every((id) => ids.includes(id))).toBe(true);
  expect(r.lag().batches).toBe(0);

  const next = await publish(world.records.store, "/acme/widgets", "", rows("/acme/widgets", 5, 1));
  await r.ensureLive("/acme/widgets", "", next.batch.batch);
  // A batch that is not live (being written) is never fetched: the request's view would be wrong, not the files.
  const writing = await world.records.store.snippets.openBatch("/acme/widgets", "v9");
  const [unpublished] = await world.records.store.snippets.appendToBatch("/acme/widgets", "v9", writing, rows("/acme/widgets", 1), [new Float32Array(embedder.dimensions)]);
  await r.ensureLive("/acme/widgets", "v9", writing);
  expect(await r.index.firstWithoutVector([unpublished!])).toBe(unpublished);
  expect(await r.index.firstWithoutVector(next.ids)).toBeUndefined();
  await expect.poll(() => r.index.firstWithoutVector(ids), { timeout: 10_000 }).toBe(ids[0]);
});

it("a replica closed while batches were published and a library removed catches up when it starts again", async () => {
  const dataDir = tempDir();
  const first = await world.replica(dataDir);
  for (const id of ["/acme/widgets", "/acme/gadgets"]) await world.records.store.libraries.create(newLibrary(id));
  const old = await publish(world.records.store, "/acme/widgets", "", rows("/acme/widgets", 25));
  const gadgets = await publish(world.records.store, "/acme/gadgets", "", rows("/acme/gadgets", 8));
  await first.ensureLive("/acme/widgets", "", old.batch.batch);
  await first.ensureLive("/acme/gadgets", "", gadgets.batch.batch);
  await first.close();
  world.closed(first);

  const current = await publish(world.records.store, "/acme/widgets", "", rows("/acme/widgets", 12, 5));
  const added = await publish(world.records.store, "/acme/widgets", "v2", rows("/acme/widgets", 7, 2));
  await world.records.store.libraries.remove("/acme/gadgets");

  const again = await world.replica(dataDir);
  // Caught up when started: no waiting.
  expect(again.lag()).toMatchObject({ batches: 0, caughtUp: true });
  expect(await again.index.firstWithoutVector([...current.ids, ...added.ids])).toBeUndefined();
  expect(await again.index.firstWithoutVector(old.ids)).toBe(old.ids[0]);
  expect(await ranked(again, gadgets.batch)).toEqual([]);
  expect((await again.index.statistics()).vectors).toBe(12 + 7);
});

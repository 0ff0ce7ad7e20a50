import { expect, it } from "vitest";
import { tempDir } from "../../helpers/temp.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { embedder, HOUR, publish, ranked, replicaWorld, rows } from "./replica-fixtures.js";

// What a replica's follower does when notices are lost: a killed listening connection, a change without a notice,
// a database that answers slowly, a database restart.
const world = replicaWorld();

it("a listening connection killed by the server: the follower connects again and catches up, with the poll an hour away", async () => {
  const r = await world.replica();
  await expect.poll(() => r.lag().listening, { timeout: 10_000 }).toBe(true);
  const killed = await world.server.asSuperuser(world.database.name, async (client) => {
    const { rows: found } = await client.query<{ ok: boolean }>("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [world.database.name]);
    return found.length;
  });
  expect(killed).toBe(1);
  await world.records.store.libraries.create(newLibrary("/acme/widgets"));
  const { batch, ids } = await publish(world.records.store, "/acme/widgets", "", rows("/acme/widgets", 15));
  await expect.poll(() => ranked(r, batch), { timeout: 15_000 }).not.toEqual([]);
  expect(await r.index.firstWithoutVector(ids)).toBeUndefined();
  await expect.poll(() => r.lag().listening, { timeout: 10_000 }).toBe(true);
});

it("a change no notice announced (published by SQL of its own) is found by the poll", async () => {
  const r = await world.replica(tempDir(), 200);
  await world.records.store.libraries.create(newLibrary("/acme/widgets"));
  const batch = await world.records.store.snippets.openBatch("/acme/widgets", "");
  const snippets = rows("/acme/widgets", 9);
  const ids = await world.records.store.snippets.appendToBatch("/acme/widgets", "", batch, snippets, await embedder.embed(snippets.map((s) => s.content)));
  await world.server.asSuperuser(world.database.name, (client) => client.query("UPDATE snippet_batches SET state = 'live' WHERE batch = $1", [batch]));
  await expect.poll(() => ranked(r, { libraryId: "/acme/widgets", version: "", batch }), { timeout: 10_000 }).not.toEqual([]);
  expect(await r.index.firstWithoutVector(ids)).toBeUndefined();
});

it("ensureLive is bounded: past its time a timeout error, the batch counted in the lag, and the fetch goes on to hold it", async () => {
  const r = await world.replica(tempDir(), HOUR, { ensureTimeoutMs: 300 });
  await world.records.store.libraries.create(newLibrary("/acme/widgets"));
  const batch = await world.records.store.snippets.openBatch("/acme/widgets", "");
  const snippets = rows("/acme/widgets", 6);
  const ids = await world.records.store.snippets.appendToBatch("/acme/widgets", "", batch, snippets, await embedder.embed(snippets.map((s) => s.content)));
  const target = { libraryId: "/acme/widgets", version: "", batch };
  await world.server.asSuperuser(world.database.name, async (client) => {
    // The vectors' reads wait behind this lock, as behind a database that answers slowly; the publication does not.
    await client.query("BEGIN");
    await client.query("LOCK TABLE snippet_vectors IN ACCESS EXCLUSIVE MODE");
    await world.records.store.snippets.publishBatch("/acme/widgets", "", batch);
    const started = Date.now();
    await expect(r.ensureLive("/acme/widgets", "", batch)).rejects.toMatchObject({ code: "timeout" });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.lag()).toMatchObject({ batches: 1 });
    expect(r.lag().oldestMs).toBeGreaterThanOrEqual(0);
    expect(await ranked(r, target)).toEqual([]);
    await client.query("COMMIT");
  });
  await expect.poll(() => ranked(r, target), { timeout: 10_000 }).not.toEqual([]);
  expect(await r.index.firstWithoutVector(ids)).toBeUndefined();
  expect(r.lag()).toMatchObject({ batches: 0, oldestMs: null });
});

it("a database restart: the follower reconnects by itself and catches up what was published after", async () => {
  const errors: unknown[] = [];
  const r = await world.replica(tempDir(), 250, { onError: (err) => errors.push(err) });
  await world.records.store.libraries.create(newLibrary("/acme/widgets"));
  await world.server.down();
  await expect.poll(() => r.lag().listening, { timeout: 10_000 }).toBe(false);
  await expect.poll(() => errors.length, { timeout: 10_000 }).toBeGreaterThan(0);
  expect(errors[0]).toMatchObject({ code: "database_unreachable" });
  await world.server.up();
  const { batch } = await publish(world.records.store, "/acme/widgets", "", rows("/acme/widgets", 11));
  await expect.poll(() => ranked(r, batch), { timeout: 15_000 }).not.toEqual([]);
  await expect.poll(() => r.lag().listening, { timeout: 10_000 }).toBe(true);
});

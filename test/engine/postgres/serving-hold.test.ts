import { randomBytes } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { holdServingLock, readServingMarker, type ServingMarker } from "../../../src/engine/postgres/serving-hold.js";
import { SERVING_LOCK } from "../../../src/engine/postgres/serving-lock.js";
import { openPool } from "../../../src/store/postgres/pool.js";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { FINGERPRINT_SETTING } from "../../../src/store/postgres/settings.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";
import { eventually } from "../../helpers/server.js";

// A serving replica's share of the serving lock (what a restore and a key rotation refuse under): held on a named
// connection, taken again after the database restarts, let go when the replica closes.
let postgres: PostgresTestServer;

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => postgres?.stop());

it("holds the serving lock shared under the replica's name, takes it again after a database restart, and lets go at close", async () => {
  const database = await postgres.newDatabase();
  const pool = openPool({ url: database.url, connectTimeoutMs: 1_000 });
  const holders = async () =>
    (
      await postgres.asSuperuser(database.name, (c) =>
        c.query<{ name: string; mode: string }>(
          "SELECT a.application_name AS name, l.mode FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.objid = $1",
          [SERVING_LOCK],
        ),
      )
    ).rows;
  const errors: unknown[] = [];
  const hold = await holdServingLock(pool, (err) => errors.push(err));
  try {
    expect(await holders()).toEqual([{ name: expect.stringMatching(new RegExp(`^lds serve on \\S+ pid ${process.pid}$`)), mode: "ShareLock" }]);
    await postgres.down();
    await postgres.up();
    await eventually(async () => (await holders().catch(() => [])).length === 1, 20_000);
  } finally {
    await hold.close();
  }
  expect(await holders()).toEqual([]);
  await pool.end();
  await database.drop();
}, 90_000);

it("after retaking the lock, reports a key rotation or a restore that ran while its connection was lost (once), and nothing when none did", async () => {
  const database = await postgres.newDatabase();
  const { store, close } = await openPostgresStore({ settings: { url: database.url } }, randomBytes(32));
  await store.settings.putIfAbsent(FINGERPRINT_SETTING, "fingerprint-when-opened");
  await close();
  const pool = openPool({ url: database.url, connectTimeoutMs: 1_000 });
  const hold = await holdServingLock(pool, () => {});
  const opened = await readServingMarker((text) => pool.query<ServingMarker>(text));
  expect(opened).toEqual({ fingerprint: "fingerprint-when-opened", schema: expect.stringMatching(/^\d+$/) });
  let changes = 0;
  hold.watch(opened, () => changes++);
  const holdIs = (granted: boolean) => async (c: pg.Client) =>
    (
      await c.query("SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objid = $1 AND l.granted = $2 AND a.application_name LIKE 'lds serve on %'", [
        SERVING_LOCK,
        granted,
      ])
    ).rows.length === 1;
  const cutOff = (c: pg.Client) => c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'lds serve on %'");
  try {
    await postgres.asSuperuser(database.name, async (c) => {
      // Cut off, nothing changed meanwhile: retaken, and then cut off again while a "rotation" runs in the gap.
      await cutOff(c);
      await eventually(() => holdIs(true)(c), 20_000);
      await cutOff(c);
      await c.query("SELECT pg_advisory_lock($1)", [SERVING_LOCK]);
      await eventually(() => holdIs(false)(c), 20_000);
      expect(changes).toBe(0);
      await c.query("UPDATE settings SET value = 'fingerprint-of-the-rotated-key' WHERE key = $1", [FINGERPRINT_SETTING]);
      await c.query("SELECT pg_advisory_unlock($1)", [SERVING_LOCK]);
      await eventually(async () => changes === 1, 20_000);
    });
  } finally {
    await hold.close();
    await pool.end();
  }
  expect(changes).toBe(1);
  await database.drop();
}, 90_000);

import { afterAll, beforeAll, expect, it } from "vitest";
import { holdServingLock } from "../../../src/engine/postgres/serving-hold.js";
import { SERVING_LOCK } from "../../../src/engine/postgres/serving-lock.js";
import { openPool } from "../../../src/store/postgres/pool.js";
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

import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";

// What replicas starting at once create "if there is none yet": another replica's creation, not yet committed, is
// waited for and then found, never duplicated (READ COMMITTED alone would not see it and create a second).
let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

let database: TestDatabase;
let replica: PostgresStore | undefined;
let other: pg.Client | undefined;
afterEach(async () => {
  await other?.end();
  await replica?.close();
  await database?.drop();
});

it("the first admin is not created beside one another replica is creating in an open transaction", async () => {
  database = await server.newDatabase();
  replica = await openPostgresStore({ settings: { url: database.url } }, randomBytes(32));
  other = new pg.Client({ connectionString: database.url });
  await other.connect();
  await other.query("BEGIN");
  await other.query("LOCK TABLE admins IN SHARE ROW EXCLUSIVE MODE");
  await other.query("INSERT INTO admins (username, password_hash) VALUES ('elsewhere', 'hash')");
  let settled = false;
  const first = replica.store.admins.createFirst("here", "hash").finally(() => (settled = true));
  // Still waiting while the other transaction is open: the check and the insert are one step against it.
  await expect.poll(async () => (await other!.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted")).rows[0].n, { timeout: 10_000 }).toBeGreaterThan(0);
  expect(settled).toBe(false);
  await other.query("COMMIT");
  expect(await first).toBeUndefined();
  expect(await replica.store.admins.count()).toBe(1);
  expect(await replica.store.admins.find("elsewhere")).toMatchObject({ username: "elsewhere" });
});

import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

it("a fresh database answers only with the role's password, over SCRAM on loopback", async () => {
  const database = await server.newDatabase();
  const good = new pg.Client({ connectionString: database.url });
  await good.connect();
  try {
    const { rows } = await good.query("SELECT current_user AS who, (SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public') AS tables");
    expect(rows[0]).toEqual({ who: "lds", tables: 0 });
  } finally {
    await good.end();
  }
  const wrong = new pg.Client({ connectionString: database.url.replace(/:[^:@/]+@/, ":wrong@") });
  await expect(wrong.connect()).rejects.toThrow(/password authentication failed/);
  // Every way in asks for a SCRAM password (no trust, not even on the socket), and only loopback listens.
  const rules = await server.asSuperuser("postgres", async (c) => (await c.query("SELECT DISTINCT auth_method FROM pg_hba_file_rules")).rows);
  expect(rules).toEqual([{ auth_method: "scram-sha-256" }]);
  expect(await server.asSuperuser("postgres", async (c) => (await c.query("SHOW listen_addresses")).rows)).toEqual([{ listen_addresses: "127.0.0.1" }]);
  await database.drop();
});

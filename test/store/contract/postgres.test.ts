import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";
import { describeStoreContract } from "./describe-store-contract.js";

// One throwaway cluster and one database for the file, migrated once (test/store/postgres/schema.test.ts applies the
// schema to new databases). Before each test every table is emptied and its ids start again at 1, as in a new
// database, on a connection kept for that: about 45 ms a test here, where copying a new database from a migrated
// template took 100-250 ms (the whole file: 9-13 s against 17-22 s; SQLite's contract 2.2-4 s on the same machine).
let server: PostgresTestServer;
let database: TestDatabase;
let resetter: pg.Client;
let emptyAll: string;
beforeAll(async () => {
  server = await startPostgres();
  database = await server.newDatabase();
  await (await openPostgresStore({ settings: { url: database.url } }, randomBytes(32))).close();
  resetter = new pg.Client({ connectionString: database.url });
  await resetter.connect();
  const { rows } = await resetter.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY tablename");
  emptyAll = `TRUNCATE ${rows.map((r) => r.name).join(", ")} RESTART IDENTITY`;
});
afterAll(async () => {
  await resetter?.end();
  await server?.stop();
});

describeStoreContract("PostgreSQL", async () => {
  await resetter.query(emptyAll);
  const opened = await openPostgresStore({ settings: { url: database.url, max: 4 } }, randomBytes(32));
  return {
    store: opened.store,
    seed: {
      // Only a schema migration writes redirects: seeded with SQL on a connection of its own.
      redirect: async (oldId, newId) => {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          await client.query("INSERT INTO library_redirects (old_id, new_id, vectors_moved) VALUES ($1, $2, 1)", [oldId, newId]);
        } finally {
          await client.end();
        }
      },
    },
    close: () => opened.close(),
  };
});

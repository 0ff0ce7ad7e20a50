import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";
import { describeStoreContract } from "./describe-store-contract.js";

// One throwaway cluster for the file. Each test gets a new database copied from one the store has migrated
// (a copy takes a fraction of applying the schema; test/store/postgres/schema.test.ts applies it to empty ones).
// The next test's copy is made while a test runs, and a used one is dropped in the background: the server works
// on them while the test process waits on its own queries.
let server: PostgresTestServer;
let migrated: TestDatabase;
let next: Promise<TestDatabase>;
const drops: Array<Promise<void>> = [];
beforeAll(async () => {
  server = await startPostgres();
  migrated = await server.newDatabase();
  await (await openPostgresStore({ settings: { url: migrated.url } }, randomBytes(32))).close();
  next = server.newDatabase(migrated.name);
});
afterAll(async () => {
  await Promise.allSettled([next, ...drops]);
  await server?.stop();
});

describeStoreContract("PostgreSQL", async () => {
  const database = await next;
  next = server.newDatabase(migrated.name);
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
    close: async () => {
      await opened.close();
      drops.push(database.drop());
    },
  };
});

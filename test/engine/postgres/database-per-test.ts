import type pg from "pg";
import { afterAll, afterEach, beforeAll } from "vitest";
import { openPool } from "../../../src/store/postgres/pool.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";

/**
 * A throwaway cluster for the test file, and a new database with its pool for each test that asks: the pool is ended
 * and the database dropped after the test, the cluster stopped after the file.
 */
export function databasePerTest(): { fresh(): Promise<{ url: string; pool: pg.Pool }> } {
  let server: PostgresTestServer | undefined;
  let current: { database: TestDatabase; pool: pg.Pool } | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterEach(async () => {
    await current?.pool.end();
    await current?.database.drop();
    current = undefined;
  });
  afterAll(async () => server?.stop());
  return {
    async fresh() {
      const database = await server!.newDatabase();
      current = { database, pool: openPool({ url: database.url }) };
      return { url: database.url, pool: current.pool };
    },
  };
}

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LdsError } from "../../../src/errors.js";
import { exportRecords } from "../../../src/engine/postgres/records-export.js";
import { importRecords } from "../../../src/engine/postgres/records-import.js";
import { openPool } from "../../../src/store/postgres/pool.js";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { Store } from "../../../src/store/store.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";
import { tempDir } from "../../helpers/temp.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { append, snippet } from "../../store/contract/snippets.contract.js";

// A server that goes away in the middle of a COPY: the export or import fails as an unreachable database does (never
// a hang), and leaves nothing half-written: no file, no schema.

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

/** 20,000 snippets of 2 KB: their COPY lasts long enough to be cut. */
async function manySnippets(store: Store): Promise<void> {
  await store.libraries.create(newLibrary("/acme/widgets"));
  const batch = await store.snippets.openBatch("/acme/widgets", "");
  for (let chunk = 0; chunk < 20; chunk++)
    await append(
      store,
      "/acme/widgets",
      "",
      batch,
      Array.from({ length: 1000 }, (_, i) => snippet(chunk * 1000 + i, { content: "word ".repeat(400) })),
    );
}

/** Wait until a statement like `pattern` runs in the database. */
async function untilCopying(database: string, pattern: string): Promise<void> {
  const copying = async () => (await server.asSuperuser(database, (c) => c.query("SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1", [pattern]))).rowCount! > 0;
  while (!(await copying())) await new Promise((resolve) => setTimeout(resolve, 20));
}

it("fails with database_unreachable when the server stops during the snippets' COPY, and removes the file it began", async () => {
  const database = await server.newDatabase();
  const pool = openPool({ url: database.url });
  try {
    await manySnippets((await openPostgresStore({ pool, url: database.url }, Buffer.alloc(32, 3))).store);
    const dir = tempDir("lds-pg-outage-");
    const exporting = exportRecords(pool, path.join(dir, "lds.db")).then(
      () => undefined,
      (err: unknown) => err,
    );
    await untilCopying(database.name, "COPY (SELECT%snippets%");
    await server.down();
    const started = Date.now();
    const error = await exporting;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(LdsError);
    expect((error as LdsError).code).toBe("database_unreachable");
    expect(fs.readdirSync(dir)).toEqual([]);
  } finally {
    await server.up();
    await pool.end();
    await database.drop();
  }
}, 60_000);

it("fails with database_unreachable when the server stops during the snippets' COPY into the new schema, which the server then rolls back", async () => {
  const root = tempDir("lds-pg-outage-import-");
  const volume = await openVolume(root);
  await manySnippets(volume.store);
  volume.close();
  const database = await server.newDatabase();
  const pool = openPool({ url: database.url });
  try {
    await (await openPostgresStore({ pool, url: database.url }, Buffer.alloc(32, 3))).close();
    const importing = importRecords(path.join(root, "lds.db"), pool).then(
      () => undefined,
      (err: unknown) => err,
    );
    await untilCopying(database.name, 'COPY "lds_restore_%"."snippets"%');
    await server.down();
    const started = Date.now();
    const error = await importing;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(LdsError);
    expect((error as LdsError).code).toBe("database_unreachable");
    await server.up();
    const schemas = await server.asSuperuser(database.name, (c) => c.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lds_restore%'"));
    expect(schemas.rows).toEqual([]);
  } finally {
    await server.up().catch(() => {});
    await pool.end();
    await database.drop();
  }
}, 60_000);

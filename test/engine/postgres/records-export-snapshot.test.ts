import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { exportRecords } from "../../../src/engine/postgres/records-export.js";
import { openPool } from "../../../src/store/postgres/pool.js";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";
import { tempDir } from "../../helpers/temp.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { append, publish, snippet } from "../../store/contract/snippets.contract.js";

// A backup runs while replicas write: the file it makes is one state of the database, never tables copied at
// different moments (lds.db's tables are copied one after another, in name order: snippet_batches, snippets, then
// teams), nor half a transaction (a publish that retired the old batch but not yet made the new one live).

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

it("exports one snapshot while another connection keeps publishing batches and adding teams: every team's batch, every snippet's batch, every batch's total present", async () => {
  const database = await server.newDatabase();
  const pool = openPool({ url: database.url });
  const opened = await openPostgresStore({ pool, url: database.url }, Buffer.alloc(32, 7));
  const writerPool = openPool({ url: database.url, max: 2 });
  const writer = (await openPostgresStore({ pool: writerPool, url: database.url }, Buffer.alloc(32, 7))).store;
  let stop = false;
  try {
    const lib = "/acme/widgets";
    await opened.store.libraries.create(newLibrary(lib));
    // Enough rows that copying the snippets takes a while: the writer goes on meanwhile.
    const big = await opened.store.snippets.openBatch(lib, "");
    for (let chunk = 0; chunk < 20; chunk++)
      await append(
        opened.store,
        lib,
        "",
        big,
        Array.from({ length: 1000 }, (_, i) => snippet(chunk * 1000 + i)),
      );
    await opened.store.snippets.publishBatch(lib, "", big);

    // Round n publishes a batch of n % 7 + 1 snippets, then adds team `t-n`: a team in the file means its batch was published first.
    const published = new Map<number, { batch: number; ids: number[] }>();
    let rounds = 0;
    const writing = (async () => {
      while (!stop) {
        const n = ++rounds;
        published.set(
          n,
          await publish(
            writer,
            lib,
            "",
            Array.from({ length: (n % 7) + 1 }, (_, i) => snippet(100_000 + n * 10 + i)),
          ),
        );
        await writer.teams.create(`t-${n}`, "free");
      }
    })();
    while (rounds < 3) await new Promise((resolve) => setImmediate(resolve));
    const roundsBefore = rounds;
    const file = path.join(tempDir("lds-pg-snapshot-"), "lds.db");
    await exportRecords(pool, file);
    const roundsDuring = rounds - roundsBefore;
    stop = true;
    await writing;
    expect(roundsDuring, "the writer went on during the export").toBeGreaterThanOrEqual(2);

    const db = new Database(file, { readonly: true });
    try {
      const teams = db.prepare("SELECT name FROM teams WHERE name LIKE 't-%'").pluck().all() as string[];
      const batches = db.prepare("SELECT batch, state, snippets FROM snippet_batches WHERE library_id = ? AND version = ''").all(lib) as Array<{ batch: number; state: string; snippets: number | null }>;
      const rowsOf = db.prepare("SELECT id FROM snippets WHERE library_id = ? AND version = '' AND batch = ? ORDER BY id").pluck();
      expect(teams.length).toBeGreaterThan(0);
      for (const team of teams) {
        const round = published.get(Number(team.slice(2)))!;
        expect(batches.find((b) => b.batch === round.batch)?.state, `${team}'s batch`).toMatch(/^(live|retired)$/);
        expect(rowsOf.all(lib, round.batch), `${team}'s snippets`).toEqual(round.ids);
      }
      expect(
        batches.filter((b) => b.state === "live"),
        "one live batch",
      ).toHaveLength(1);
      for (const batch of batches) {
        if (batch.snippets !== null) expect(rowsOf.all(lib, batch.batch), `batch ${batch.batch}'s rows`).toHaveLength(batch.snippets);
      }
      const orphans = db
        .prepare("SELECT count(*) FROM snippets s WHERE NOT EXISTS (SELECT 1 FROM snippet_batches b WHERE b.library_id = s.library_id AND b.version = s.version AND b.batch = s.batch)")
        .pluck()
        .get();
      expect(orphans, "snippets without their batch").toBe(0);
      // The last team the file has is the last round whose batch it has, or the one before (a publish committed, its team not yet).
      const lastTeam = Math.max(...teams.map((t) => Number(t.slice(2))));
      const lastBatch = Math.max(...[...published.entries()].filter(([, p]) => batches.some((b) => b.batch === p.batch)).map(([n]) => n));
      expect(lastBatch - lastTeam).toBeGreaterThanOrEqual(0);
      expect(lastBatch - lastTeam).toBeLessThanOrEqual(1);
    } finally {
      db.close();
    }
  } finally {
    stop = true;
    await writerPool.end();
    await pool.end();
    await database.drop();
  }
}, 60_000);

import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LdsError } from "../../../src/errors.js";
import { endpointOf, openPool } from "../../../src/store/postgres/pool.js";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { inTransaction } from "../../../src/store/postgres/transaction.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

it("while the server is down operations fail as database_unreachable (host and port, no password) within the connect timeout, and work again once it is back", async () => {
  const database = await server.newDatabase();
  const password = new URL(database.url).password;
  const opened = await openPostgresStore({ settings: { url: database.url, connectTimeoutMs: 2_000 } }, randomBytes(32));
  try {
    await opened.store.settings.set("probe", "before");
    await server.down();
    for (const operation of [() => opened.store.settings.get("probe"), () => opened.store.settings.saveWithSecrets("probe", "during", [{ name: "s", value: "v" }])]) {
      const started = Date.now();
      const error = await operation().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error).toBeInstanceOf(LdsError);
      expect((error as LdsError).code).toBe("database_unreachable");
      expect((error as LdsError).message).toContain(`127.0.0.1:${server.port}`);
      expect(`${(error as LdsError).message} ${(error as LdsError).hint}`).not.toContain(password);
    }
    await server.up();
    // The pool's connections died with the server: the store connects again by itself.
    expect(await opened.store.settings.get("probe")).toBe("before");
    await opened.store.settings.set("probe", "after");
    expect(await opened.store.settings.get("probe")).toBe("after");
  } finally {
    await opened.close();
    await database.drop();
  }
});

it("a statement held up past the statement timeout is cancelled by the server (timeout), and the store goes on", async () => {
  const database = await server.newDatabase();
  const opened = await openPostgresStore({ settings: { url: database.url, statementTimeoutMs: 300 } }, randomBytes(32));
  try {
    await opened.store.settings.set("probe", "before");
    const blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE settings IN ACCESS EXCLUSIVE MODE");
      const started = Date.now();
      const error = await opened.store.settings.get("probe").then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(error).toBeInstanceOf(LdsError);
      expect((error as LdsError).code).toBe("timeout");
      await blocker.query("ROLLBACK");
    } finally {
      await blocker.end();
    }
    expect(await opened.store.settings.get("probe")).toBe("before");
  } finally {
    await opened.close();
    await database.drop();
  }
});

it("a transaction whose connection the server ends between two statements fails as database_unreachable, without an unhandled error, and the pool goes on", async () => {
  const database = await server.newDatabase();
  const pool = openPool({ url: database.url, connectTimeoutMs: 2_000 });
  try {
    let held!: (pid: number) => void;
    const holding = new Promise<number>((resolve) => (held = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    const transaction = inTransaction(pool, endpointOf(database.url), async (tx) => {
      held((await tx.row<{ pid: number }>("SELECT pg_backend_pid() AS pid"))!.pid);
      await resumed;
      await tx.run("SELECT 1");
    });
    const failed = transaction.then(
      () => undefined,
      (err: unknown) => err,
    );
    const pid = await holding;
    // The server ends the held connection while no statement runs on it: pg emits "error" on the checked-out client
    // (unhandled, it would end the process: a database restart did so to every replica).
    await server.asSuperuser(database.name, (c) => c.query("SELECT pg_terminate_backend($1)", [pid]));
    for (let gone = false; !gone;) {
      gone = await server.asSuperuser(database.name, async (c) => (await c.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).rowCount === 0);
    }
    resume();
    const error = await failed;
    expect(error).toBeInstanceOf(LdsError);
    expect((error as LdsError).code).toBe("database_unreachable");
    // The broken connection was not given back: the next statement gets a working one.
    expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  } finally {
    await pool.end();
    await database.drop();
  }
});

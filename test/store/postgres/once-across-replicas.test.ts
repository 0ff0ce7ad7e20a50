import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";

// What replicas must do once between them: create "if there is none yet" (another replica's creation, not yet
// committed, is waited for and then found, never duplicated: READ COMMITTED alone would not see it and create a
// second), and refresh a grant's rotating tokens (the second replica uses what the first got).
let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

let database: TestDatabase;
let replica: PostgresStore | undefined;
let second: PostgresStore | undefined;
let other: pg.Client | undefined;
afterEach(async () => {
  await other?.end();
  await replica?.close();
  await second?.close();
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

it("two replicas refreshing one grant at once call the provider once; the second uses the first's tokens", async () => {
  database = await server.newDatabase();
  const key = randomBytes(32);
  replica = await openPostgresStore({ settings: { url: database.url } }, key);
  second = await openPostgresStore({ settings: { url: database.url } }, key);
  const teamId = (await replica.store.teams.create("acme", "pro")).id;
  const id = await replica.store.oauth.saveGrant({ teamId, provider: "gitlab", account: "me", scopes: "api", tokens: { accessToken: "a1", refreshToken: "r1" }, target: { kind: "git", hosts: ["gitlab.com"] } });
  const used: string[] = [];
  let entered!: () => void;
  const firstInside = new Promise<void>((resolve) => (entered = resolve));
  let letGo!: () => void;
  const providerAnswers = new Promise<void>((resolve) => (letGo = resolve));
  const first = replica.store.oauth.refreshTokens(id, async (current) => {
    used.push(current.refreshToken!);
    entered();
    await providerAnswers;
    return { tokens: { accessToken: "a2", refreshToken: "r2" } };
  });
  await firstInside;
  const later = second.store.oauth.refreshTokens(id, async (current) => (current.refreshToken === "r1" ? (used.push("r1"), { tokens: { accessToken: "a3" } }) : "current"));
  // The second replica waits on the grant's row while the first one's provider has not answered.
  other = new pg.Client({ connectionString: database.url });
  await other.connect();
  await expect.poll(async () => (await other!.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted")).rows[0].n, { timeout: 10_000 }).toBeGreaterThan(0);
  letGo();
  expect(await first).toMatchObject({ accessToken: "a2", refreshToken: "r2" });
  expect(await later).toMatchObject({ accessToken: "a2", refreshToken: "r2" });
  expect(used).toEqual(["r1"]);
});

it("two replicas counting one key's requests at once count each request once, in one window", async () => {
  database = await server.newDatabase();
  const key = randomBytes(32);
  replica = await openPostgresStore({ settings: { url: database.url, max: 5 } }, key);
  second = await openPostgresStore({ settings: { url: database.url, max: 5 } }, key);
  const charges = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? replica! : second!).store.requestWindows.charge("requests:lds_abc", 60_000, 1)));
  expect(charges.map((w) => w.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  expect(new Set(charges.map((w) => w.start)).size).toBe(1);
});

it("a replica deletes the request windows that ended (keys seen once do not pile up), and keeps those that run", async () => {
  database = await server.newDatabase();
  const key = randomBytes(32);
  replica = await openPostgresStore({ settings: { url: database.url } }, key);
  await replica.store.requestWindows.charge("logins:made-up-1", 1, 1);
  await replica.store.requestWindows.charge("logins:made-up-2", 1, 1);
  await replica.store.requestWindows.charge("requests:lds_live", 60_000, 1);
  other = new pg.Client({ connectionString: database.url });
  await other.connect();
  const keys = async () => (await other!.query<{ key: string }>("SELECT key FROM request_windows ORDER BY key")).rows.map((r) => r.key);
  expect(await keys()).toEqual(["logins:made-up-1", "logins:made-up-2", "requests:lds_live"]);
  // A replica started later prunes at its first charge (then at most once a minute): the 1 ms windows have ended.
  await expect.poll(() => Date.now()).toBeGreaterThan(Date.now() + 5);
  second = await openPostgresStore({ settings: { url: database.url } }, key);
  await second.store.requestWindows.charge("requests:lds_other", 60_000, 1);
  expect(await keys()).toEqual(["requests:lds_live", "requests:lds_other"]);
});

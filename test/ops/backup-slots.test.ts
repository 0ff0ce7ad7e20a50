import { randomBytes } from "node:crypto";
import { Cron } from "croner";
import { afterAll, beforeAll, expect, it } from "vitest";
import { claimSlot, dueTime, replicaName, thisReplica, type Replica } from "../../src/ops/backup-slots.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../helpers/postgres-server.js";

// One replica runs each firing of a schedule (the backup's cron, the daily drill): the claim is one insert in the
// records every replica shares, keyed by the time the firing was due.
let server: PostgresTestServer;
let database: TestDatabase;
const stores: PostgresStore[] = [];
beforeAll(async () => {
  server = await startPostgres();
  database = await server.newDatabase();
  const key = randomBytes(32);
  for (let i = 0; i < 3; i++) stores.push(await openPostgresStore({ settings: { url: database.url } }, key));
});
afterAll(async () => {
  for (const opened of stores) await opened.close();
  await server?.stop();
});

/** Three replicas of one host, as three servers on it would be: same host and pid here, told apart by their ids. */
const replicas: Replica[] = [thisReplica(), thisReplica(), thisReplica()];

it("of three replicas claiming one drill slot at once, one wins and the others are told who", async () => {
  const due = new Date("2026-11-28T04:30:00.000Z");
  const claims = await Promise.all(stores.map((opened, i) => claimSlot(opened.store, "drill", due, replicas[i]!)));
  const winners = claims.flatMap((claim, i) => (claim.won ? [i] : []));
  expect(winners).toHaveLength(1);
  for (const claim of claims) if (!claim.won) expect(claim.holder).toBe(replicaName(replicas[winners[0]!]!.id));
  // Asked again (a replica whose cron fired late), the slot stays taken; the backup's slot of the same time is apart.
  expect(await claimSlot(stores[0]!.store, "drill", due, replicas[0]!)).toEqual(winners[0] === 0 ? { won: true } : { won: false, holder: replicas[winners[0]!]!.name });
  expect(await claimSlot(stores[1]!.store, "backup", due, replicas[1]!)).toEqual({ won: true });
});

it("a winner prunes the claims of its schedule older than a day, and keeps the recent ones", async () => {
  const store = stores[0]!.store;
  const old = new Date("2026-11-20T03:00:00.000Z");
  const recent = new Date("2026-11-27T12:00:00.000Z");
  expect(await claimSlot(store, "backup", old, replicas[0]!)).toEqual({ won: true });
  expect(await claimSlot(store, "backup", recent, replicas[0]!)).toEqual({ won: true });
  expect(await claimSlot(store, "backup", new Date("2026-11-28T03:00:00.000Z"), replicas[0]!)).toEqual({ won: true });
  expect(await store.settings.get(`backup.slot.backup.${old.toISOString()}`)).toBeUndefined();
  expect(await store.settings.get(`backup.slot.backup.${recent.toISOString()}`)).toBe(replicas[0]!.id);
  // The drill's claims are another series: not pruned by the backup's winner.
  expect(await store.settings.get("backup.slot.drill.2026-11-28T04:30:00.000Z")).toBeDefined();
});

it("the due time is the schedule's, whichever replica's timer ran late", () => {
  const cron = new Cron("*/5 * * * * *", { timezone: "UTC", paused: true });
  const due = new Date("2026-11-28T00:00:05.000Z");
  for (const lateMs of [0, 3, 480, 4_999]) expect(dueTime(cron, new Date(due.getTime() + lateMs))).toEqual(due);
  cron.stop();
});

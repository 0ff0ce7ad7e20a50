import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../helpers/postgres-server.js";
import { client, eventually, serverPid, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";

// Issue 34, "Done when" 3: three `lds serve` replicas on one PostgreSQL database. Every replica's cron fires; one
// scheduled slot makes one archive; every replica shows the running backup and refuses a second; a replica that
// stops or dies mid-backup lets go of it; a rate limit holds across replicas.
let postgres: PostgresTestServer;
let database: TestDatabase;
let keyFile: string;
/** The destination every replica reaches (not a data directory's own backups folder, which replicas do not share). */
let shared: string;
type Replica = TestServer & { dir: string; name: string; admin: ReturnType<typeof client> };
let replicas: Record<"a" | "b" | "c", Replica>;

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.newDatabase();
  keyFile = path.join(tempDirForFile(), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  shared = tempDirForFile("lds-shared-backups-");
  const dirs = { a: tempDirForFile("lds-replica-a-"), b: tempDirForFile("lds-replica-b-"), c: tempDirForFile("lds-replica-c-") };
  const init = await runCli("lds", ["init", "--email", "ops@example.com", "--json"], replicaEnv(dirs.a));
  expect(init.exitCode, init.stderr).toBe(0);
  // A and C keep each backup under way for 10 s (after taking the lock): long enough to look at it from elsewhere.
  const slow = { LDS_FAILPOINT: "backup-under-way" };
  const [a, b, c] = await Promise.all([startServer(dirs.a, { ...replicaEnv(dirs.a), ...slow }), startServer(dirs.b, replicaEnv(dirs.b)), startServer(dirs.c, { ...replicaEnv(dirs.c), ...slow })]);
  replicas = { a: await named(a, dirs.a), b: await named(b, dirs.b), c: await named(c, dirs.c) };
}, 120_000);
afterAll(async () => {
  for (const replica of Object.values(replicas ?? {})) await replica.stop().catch(() => {});
  await postgres?.stop();
});

/** A started server as a replica of the tests: its data directory, its name in messages, an admin session. */
async function named(server: TestServer, dir: string): Promise<Replica> {
  const admin = client(server.url);
  expect((await admin.login()).status).toBe(200);
  return Object.assign(server, { dir, name: `${os.hostname()}:${serverPid(dir)}`, admin });
}

/** SQL on the replicas' database, as the test sees it (not through LDS). */
async function inDatabase<T>(work: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}
/** Sessions holding the backup lock (engine/postgres/serving-lock.ts BACKUP_LOCK, 0x4c445303). */
const backupLockHolders = () =>
  inDatabase(async (db) => (await db.query("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = $1 AND objsubid = 1", [0x4c445303])).rowCount ?? 0);
/** The running backup's progress as recorded for every replica ("" once cleared). */
const progressRow = () => inDatabase(async (db) => (await db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'backup.progress'")).rows[0]?.value ?? "");

/** A replica's environment: the shared database and key, its own data directory. */
const replicaEnv = (dataDir: string) => ({
  LDS_DATABASE_URL: database.url,
  LDS_SECRET_KEY_FILE: keyFile,
  LDS_DATA_DIR: dataDir,
  LDS_RATE_LIMIT_UNAUTHENTICATED: "3",
});

const config = (extra: Record<string, unknown> = {}) => ({
  destination: { type: "local", path: shared },
  schedule: { preset: "off" },
  retention: { keep: null },
  compression: "none",
  ...extra,
});
const status = async (replica: TestServer & { admin: ReturnType<typeof client> }) => (await replica.admin.get("/api/backup/status")).json;
const archives = () => fs.readdirSync(shared).filter((name) => name.endsWith(".tar"));
/** Every replica's status once no backup runs and the last result is the one `done` accepts. */
const settled = (done: (result: { trigger: string; startedAt: string }) => boolean, among = Object.values(replicas)) =>
  eventually(async () => {
    const all = await Promise.all(among.map(status));
    return all.every((s) => !s.running && s.lastResult && done(s.lastResult)) ? all : undefined;
  }, 90_000);

describe("backups of three replicas on one PostgreSQL database (issue 34)", () => {
  it("one scheduled slot makes one archive: every replica's cron fires, one runs it, all agree on its result", async () => {
    const { a, b, c } = replicas;
    // Once, 20 s from now: saved on A, followed by B and C within their schedule poll (5 s).
    const due = new Date(Math.ceil((Date.now() + 20_000) / 1000) * 1000);
    const cron = `${due.getUTCSeconds()} ${due.getUTCMinutes()} ${due.getUTCHours()} * * *`;
    const saved = await a.admin.put("/api/backup/config", config({ schedule: { preset: "custom", cron, timezone: "UTC" } }));
    expect(saved.status, saved.text).toBe(200);
    for (const replica of [a, b, c]) await eventually(async () => (await status(replica)).nextRun === due.toISOString(), 15_000);

    const [first, ...others] = await settled((result) => result.trigger === "schedule");
    expect(first.lastResult, JSON.stringify(first.lastResult)).toMatchObject({ ok: true, trigger: "schedule" });
    for (const other of others) expect(other.lastResult).toEqual(first.lastResult);
    expect(Date.parse(first.lastResult.startedAt)).toBeGreaterThanOrEqual(due.getTime());
    expect(archives()).toEqual([first.lastResult.archive]);
    // The two that lost the slot say who took it, at info level; none says it skipped a backup.
    const outputs = [a, b, c].map((replica) => replica.output());
    const losers = outputs.filter((out) => out.includes("scheduled backup: slot taken by replica"));
    expect(losers).toHaveLength(2);
    const winner = [a, b, c].find((replica) => !replica.output().includes("scheduled backup: slot taken by replica"))!;
    for (const out of losers) expect(out).toContain(`slot taken by replica ${winner.name}`);
    for (const out of outputs) expect(out).not.toContain("scheduled backup skipped");

    // The archive holds the records as a SQLite-made one does, and passes lds verify.
    const verified = await runCli("lds", ["verify", path.join(shared, first.lastResult.archive)]);
    expect(verified.exitCode, verified.stderr + verified.stdout).toBe(0);
    expect((await a.admin.put("/api/backup/config", config())).status).toBe(200);
    for (const replica of [a, b, c]) await eventually(async () => (await status(replica)).nextRun === null, 15_000);
  }, 180_000);

  it("a backup running on one replica shows on every replica, and a backup asked of another is refused naming it", async () => {
    const { a, b, c } = replicas;
    expect((await a.admin.put("/api/backup/config", config())).status).toBe(200);
    const before = archives().length;
    const started = await a.admin.post("/api/backup");
    expect(started.status, started.text).toBe(202);
    for (const replica of [b, c]) {
      const seen = await status(replica);
      expect(seen.running).toBe(true);
      expect(seen.progress).toMatchObject({ trigger: "api", replica: a.name, startedAt: started.json.startedAt });
    }
    const refused = await b.admin.post("/api/backup");
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error).toBe("backup_running");
    expect(refused.json.message).toContain(`on replica ${a.name}`);
    const all = await settled((result) => result.startedAt === started.json.startedAt);
    expect(all[0].lastResult, JSON.stringify(all[0].lastResult)).toMatchObject({ ok: true, trigger: "api" });
    expect(archives()).toHaveLength(before + 1);
  }, 120_000);

  it("a rate limit holds across replicas: requests with a bad key counted on one are refused on another", async () => {
    const { a, b, c } = replicas;
    const bad = { authorization: "Bearer lds_not-a-real-key" };
    // LDS_RATE_LIMIT_UNAUTHENTICATED=3 per minute and address: three refusals counted on A and C, the fourth on B is over.
    for (const replica of [a, c, a]) {
      const response = await fetch(`${replica.url}/v2/libs/search?libraryName=x&query=y`, { headers: bad });
      expect(response.status).toBe(401);
    }
    const limited = await fetch(`${b.url}/v2/libs/search?libraryName=x&query=y`, { headers: bad });
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { error: string }).error).toBe("rate_limit_exceeded");
  }, 60_000);

  it("a replica stopped mid-backup lets go of the lock, and one killed mid-backup is not shown running", async () => {
    const { a, b, c } = replicas;
    expect((await c.admin.post("/api/backup")).status).toBe(202);
    expect((await status(b)).progress).toMatchObject({ replica: c.name });
    await c.stop();
    // C's close() interrupted its backup and released the lock: B may back up at once.
    const next = await b.admin.post("/api/backup");
    expect(next.status, next.text).toBe(202);
    await settled((result) => result.startedAt === next.json.startedAt, [a, b]);

    expect((await a.admin.post("/api/backup")).status).toBe(202);
    expect((await status(b)).progress).toMatchObject({ replica: a.name });
    a.child.kill("SIGKILL");
    // A's progress stays recorded, but its lock went with its connection: nothing runs, and B may back up.
    const idle = await eventually(async () => {
      const seen = await status(b);
      return seen.running ? undefined : seen;
    }, 20_000);
    expect(idle.progress).toBeNull();
    const after = await b.admin.post("/api/backup");
    expect(after.status, after.text).toBe(202);
    await eventually(async () => {
      const seen = await status(b);
      return !seen.running && seen.lastResult?.startedAt === after.json.startedAt ? seen : undefined;
    }, 60_000);
  }, 180_000);

  it("a killed replica's stale progress is probed without taking the backup lock, cleared, and never refuses a backup", async () => {
    const { b } = replicas;
    const dirs = { d: tempDirForFile("lds-replica-d-"), e: tempDirForFile("lds-replica-e-") };
    // D keeps its backup under way to be killed in it; E would hold the backup lock for a minute had its status taken it.
    const [d, e] = await Promise.all([
      startServer(dirs.d, { ...replicaEnv(dirs.d), LDS_FAILPOINT: "backup-under-way" }).then((server) => named(server, dirs.d)),
      startServer(dirs.e, { ...replicaEnv(dirs.e), LDS_FAILPOINT: "backup-holding-lock" }).then((server) => named(server, dirs.e)),
    ]);
    try {
      expect((await b.admin.put("/api/backup/config", config())).status).toBe(200);
      const started = await d.admin.post("/api/backup");
      expect(started.status, started.text).toBe(202);
      d.child.kill("SIGKILL");
      await eventually(async () => (await backupLockHolders()) === 0, 20_000);
      expect(JSON.parse(await progressRow())).toMatchObject({ replica: d.name, startedAt: started.json.startedAt });

      // E's status, watched from the database while it is asked: the lock is never taken, nothing runs, the row is cleared.
      let answered = false;
      const polled = status(e).finally(() => (answered = true));
      let taken = 0;
      while (!answered) taken = Math.max(taken, await backupLockHolders());
      const seen = await polled;
      expect(taken).toBe(0);
      expect(seen).toMatchObject({ running: false, progress: null });
      expect(await progressRow()).toBe("");

      // A backup asked of B while E's status is polled starts.
      const [next] = await Promise.all([b.admin.post("/api/backup"), status(e), status(e)]);
      expect(next.status, next.text).toBe(202);
      await settled((result) => result.startedAt === next.json.startedAt, [b, e]);
    } finally {
      await Promise.all([d.stop().catch(() => {}), e.stop().catch(() => {})]);
    }
  }, 180_000);

  it("the default destination (a replica's own folder) is refused when the backup is asked for, and nothing runs", async () => {
    const { b } = replicas;
    const before = (await status(b)).lastResult;
    expect((await b.admin.put("/api/backup/config", config({ destination: { type: "local", path: null } }))).status).toBe(200);
    const refused = await b.admin.post("/api/backup");
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error).toBe("validation_error");
    expect(refused.json.message).toContain(`The default backup destination ${path.join(b.dir, "backups")} is this replica's own folder`);
    expect(await status(b)).toMatchObject({ running: false, progress: null, lastResult: before });
    expect(await progressRow()).toBe("");
    expect(await backupLockHolders()).toBe(0);

    // A scheduled firing has no one to answer: it is recorded and logged as one failed backup, not as skipped.
    const due = new Date(Math.ceil((Date.now() + 5_000) / 1000) * 1000);
    const cron = `${due.getUTCSeconds()} ${due.getUTCMinutes()} ${due.getUTCHours()} * * *`;
    const failedBefore = b.output().split("backup failed").length;
    const saved = await b.admin.put("/api/backup/config", config({ destination: { type: "local", path: null }, schedule: { preset: "custom", cron, timezone: "UTC" } }));
    expect(saved.status, saved.text).toBe(200);
    const [fired] = await settled((result) => result.trigger === "schedule" && Date.parse(result.startedAt) >= due.getTime(), [b]);
    expect(fired.lastResult).toMatchObject({ ok: false, error: { code: "validation_error", message: refused.json.message } });
    expect(b.output().split("backup failed").length - failedBefore).toBe(1);
    expect(b.output()).not.toContain("scheduled backup skipped");
    expect((await b.admin.put("/api/backup/config", config())).status).toBe(200);
  }, 60_000);
});

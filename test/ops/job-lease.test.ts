import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { keepLease } from "../../src/ops/job-lease.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { startPostgres, type PostgresTestServer } from "../helpers/postgres-server.js";
import { eventually } from "../helpers/server.js";
import { newLibrary } from "../store/contract/libraries.contract.js";

// Heartbeats against a real PostgreSQL server (ops/job-lease.ts): they keep a job, and a database that stops
// answering costs the job once the lease has passed by this process's clock, never before.
let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

function capturedLogger() {
  const messages: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) messages.push((JSON.parse(line) as { msg: string }).msg);
      done();
    },
  });
  return { logger: pino({ level: "info" }, stream), messages };
}

async function claimedJob(leaseMs: number) {
  const database = await server.newDatabase();
  const opened = await openPostgresStore({ settings: { url: database.url, connectTimeoutMs: 1_000 } }, randomBytes(32));
  await opened.store.libraries.create(newLibrary("/acme/widgets"));
  await opened.store.jobs.enqueue({ libraryId: "/acme/widgets", kind: "ingest", payload: { url: "u" } });
  const heldSince = Date.now();
  const job = (await opened.store.jobs.claimNext("runner-a", leaseMs))!;
  return { store: opened.store, job, heldSince, close: async () => (await opened.close(), await database.drop()) };
}

it("heartbeats keep a job past its lease: nobody else can claim it while they run", async () => {
  const { store, job, heldSince, close } = await claimedJob(600);
  const { logger } = capturedLogger();
  const keeper = keepLease(store.jobs, { jobId: job.id, owner: "runner-a" }, { leaseMs: 600, heartbeatMs: 200, heldSince }, logger);
  try {
    // Three leases' time: without its heartbeats the job would have been free twice over.
    const later = Date.now() + 1_800;
    await eventually(async () => Date.now() > later);
    expect(await store.jobs.claimNext("runner-b", 60_000)).toBeUndefined();
    expect(keeper.signal.aborted).toBe(false);
  } finally {
    keeper.stop();
    await close();
  }
});

it("while the database is unreachable the heartbeat tries again at each beat, and gives the job up once its lease has passed locally", async () => {
  const leaseMs = 1_500;
  const { store, job, heldSince, close } = await claimedJob(leaseMs);
  const { logger, messages } = capturedLogger();
  const keeper = keepLease(store.jobs, { jobId: job.id, owner: "runner-a" }, { leaseMs, heartbeatMs: 300, heldSince }, logger);
  try {
    const downAt = Date.now();
    await server.down();
    await eventually(async () => keeper.signal.aborted, 15_000);
    // Not at the first failed beat: only once the lease, last renewed at most a beat before the outage, has passed.
    expect(Date.now() - downAt).toBeGreaterThanOrEqual(leaseMs - 2 * 300);
    expect(messages).toContainEqual("could not renew the job's lease; trying again at the next heartbeat");
    expect(messages).toContainEqual(expect.stringMatching(/^job lease lost: its lease passed while the database (could not be reached|did not answer)/));
    expect(keeper.signal.reason).toMatchObject({ code: "lease_lost" });
  } finally {
    keeper.stop();
    await server.up();
    await close();
  }
});

import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createJobRunner } from "../../src/ops/job-runner.js";
import { createRemoteEmbedder } from "../../src/vectors/remote-embedder.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { startEmbeddingServer, type EmbeddingServer } from "../helpers/embedding-server.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { eventually } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";
import { newLibrary } from "../store/contract/libraries.contract.js";

let git: GitServer;
let provider: EmbeddingServer;
beforeAll(async () => {
  git = await startGitServer("unused-token");
  provider = await startEmbeddingServer();
});
afterAll(async () => {
  await provider?.close();
  await git?.close();
});

/** A logger whose lines the test reads. */
function capturedLogger(): { logger: pino.Logger; lines: () => Array<{ level: number; msg: string }> } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: "info" }, stream), lines: () => lines.map((l) => JSON.parse(l) as { level: number; msg: string }) };
}

it("a runner whose lease another runner took over stops its ingestion, publishes nothing and does not finish the job", async () => {
  const repo = await git.createRepo("public", "acme", "widgets", { "README.md": "# Widgets\n\nWidgets render values in small parts.\n\n## Install\n\nRun the installer.\n" });
  // The ingestion waits on the embedding provider (a minute per answer): the job is mid-work while its lease passes.
  provider.knobs.delayMs = 60_000;
  const embedder = createRemoteEmbedder({ provider: "openai", url: provider.openaiUrl, model: "m", dimensions: 16, batch: 64, timeoutMs: 120_000, queryTimeoutMs: 1_000 });
  const volume = await openVolume(tempDir(), embedder);
  const { logger, lines } = capturedLogger();
  const host = new URL(git.base).host;
  await volume.store.libraries.createWithJob(newLibrary("/acme/widgets", { sourceUrl: repo.url }), null, { url: repo.url });
  // Heartbeats every 5 s for a 300 ms lease: the lease passes before the first one, as when a replica stalls.
  const runner = await createJobRunner({ volume, logger, soleProcess: true, leaseMs: 300, heartbeatMs: 5_000, pollMs: 60_000, gitPolicy: { allowHttpHosts: [host], defaultHost: host } });
  try {
    await eventually(async () => provider.requests.length > 0);
    const started = Date.now();
    const taken = await eventually(async () => volume.store.jobs.claimNext("replica-b:1:bbbb", 60_000), 4_000);
    expect(taken).toMatchObject({ libraryId: "/acme/widgets", attempts: 2, leaseOwner: "replica-b:1:bbbb" });
    // The next heartbeat finds the lease gone: the job's work is aborted (the minute-long embedding request with it).
    await runner.drained();
    expect(Date.now() - started).toBeLessThan(20_000);
    const warnings = lines().filter((l) => l.level === 40);
    expect(warnings.map((w) => w.msg)).toContainEqual(expect.stringMatching(/^job lease lost: another runner took the job over/));
    expect(warnings.map((w) => w.msg)).toContainEqual(expect.stringMatching(/this runner lost its lease; it is not finished here/));
    // Nothing published, the library not marked failed by the old runner, and the job still the new holder's.
    expect(await volume.store.snippets.liveBatch("/acme/widgets", "")).toBe(0);
    expect((await volume.store.libraries.find("/acme/widgets"))!.state).not.toBe("failed");
    expect(await volume.store.jobs.hasPending("/acme/widgets")).toBe(true);
    expect(await volume.store.jobs.finish(taken.id, "replica-b:1:bbbb", null)).toBe(true);
  } finally {
    provider.knobs.delayMs = 0;
    await runner.close();
    await volume.close();
  }
});

it("a runner on a shared database (soleProcess false) leaves another runner's running job alone at start; a sole one queues it again", async () => {
  const volume = await openVolume(tempDir());
  const { logger } = capturedLogger();
  try {
    // Plain http to a closed loopback port, not allowed by the runner's policy: should a runner run it, nothing leaves the machine.
    await volume.store.libraries.createWithJob(newLibrary("/acme/held"), null, { url: "http://127.0.0.1:1/acme/held" });
    const held = (await volume.store.jobs.claimNext("replica-b:1:bbbb", 60_000))!;
    const shared = await createJobRunner({ volume, logger, soleProcess: false, pollMs: 60_000 });
    await shared.drained();
    await shared.close();
    expect(await volume.store.jobs.renewLease(held.id, "replica-b:1:bbbb", 60_000)).toBe(true);
    // A sole process knows no other runner can hold it: the job is queued again at once, no longer replica-b's.
    const sole = await createJobRunner({ volume, logger, soleProcess: true, pollMs: 60_000 });
    await sole.close();
    expect(await volume.store.jobs.renewLease(held.id, "replica-b:1:bbbb", 60_000)).toBe(false);
  } finally {
    await volume.close();
  }
});

it("a runner on a shared database closed mid-job gives the job back: queued at once, its claim not counted, another runner's first attempt", async () => {
  const repo = await git.createRepo("public", "acme", "gizmos", { "README.md": "# Gizmos\n\nGizmos turn values into parts.\n\n## Install\n\nRun the installer.\n" });
  // The ingestion waits on the embedding provider (a minute per answer): the job is mid-work when the runner closes.
  provider.knobs.delayMs = 60_000;
  const embedder = createRemoteEmbedder({ provider: "openai", url: provider.openaiUrl, model: "m", dimensions: 16, batch: 64, timeoutMs: 120_000, queryTimeoutMs: 1_000 });
  const volume = await openVolume(tempDir(), embedder);
  const { logger, lines } = capturedLogger();
  const host = new URL(git.base).host;
  const asked = provider.requests.length;
  await volume.store.libraries.createWithJob(newLibrary("/acme/gizmos", { sourceUrl: repo.url }), null, { url: repo.url });
  // A lease of a minute: only a give-back lets another runner take the job before it passes.
  const runner = await createJobRunner({ volume, logger, soleProcess: false, leaseMs: 60_000, pollMs: 60_000, gitPolicy: { allowHttpHosts: [host], defaultHost: host } });
  try {
    await eventually(async () => provider.requests.length > asked);
    await runner.close();
    expect(lines().map((l) => l.msg)).toContainEqual(expect.stringMatching(/^job interrupted by shutdown; it was given back/));
    expect(await volume.store.jobs.hasQueued()).toBe(true);
    expect(await volume.store.jobs.claimNext("replica-b:1:bbbb", 60_000)).toMatchObject({ libraryId: "/acme/gizmos", attempts: 1, leaseOwner: "replica-b:1:bbbb" });
  } finally {
    provider.knobs.delayMs = 0;
    await runner.close();
    await volume.close();
  }
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { startPostgres, type PostgresTestServer } from "../helpers/postgres-server.js";
import { docsOfSize, openDrill, referenceSnippetCount, sameRepositories, waitFor, type Drill } from "./postgres-drill-fixture.js";

// Issue 34, "Done when" 2: three replicas, 50 queued jobs, one replica killed with SIGKILL while it runs a job.
const LEASE_MS = 3_000;
const JOBS = 50;
let postgres: PostgresTestServer;
let git: GitServer;
let drill: Drill & { close(): Promise<void> };

beforeAll(async () => {
  [postgres, git] = await Promise.all([startPostgres(), startGitServer("ghp_unused-token-for-private-repos")]);
  drill = await openDrill(postgres, git, { LDS_JOB_LEASE_MS: String(LEASE_MS) });
});
afterAll(async () => {
  await drill?.close();
  await git?.close();
  await postgres?.stop();
});

interface JobRow {
  id: number;
  library: string;
  state: string;
  attempts: number;
  owner: string | null;
}

describe("a replica killed mid-job (issue 34, done-when 2)", () => {
  it("every job ends done once, its snippets whole, and the killed replica's job runs again within its lease + 5 s", async () => {
    const files = docsOfSize(2);
    const started = Date.now();
    const lap = (what: string) => process.stdout.write(`${what}: ${Date.now() - started} ms\n`);
    // 50 repositories of the same pages (the cheapest real jobs: each one a clone, a parse and a batch of its own).
    const repos = await sameRepositories(git, "drill", "harbour", JOBS, files);
    const reference = await referenceSnippetCount(git, repos[0]!);
    expect(reference).toBeGreaterThan(2);
    lap("repositories and reference");

    const replicas = await drill.startReplicas(3);
    const libraries = await drill.submitAll(replicas, repos);
    expect(new Set(libraries).size).toBe(JOBS);
    lap("replicas started, jobs queued");

    // The victim: a replica while it holds a running job (its owner id names its process).
    const victim = replicas[1]!;
    const running = () => drill.query<JobRow>(`SELECT id, state, attempts, lease_owner AS owner FROM jobs WHERE state = 'running' AND lease_owner LIKE $1`, [`%:${victim.pid}:%`]);
    await waitFor(async () => (await running()).length > 0, 60_000, "the victim replica runs a job");
    victim.child.kill("SIGKILL");
    await victim.child;
    const killedAt = Date.now();
    // What was still running under the dead process's leases: interrupted mid-job.
    const interrupted = await running();
    expect(interrupted.length, "the replica was killed while it ran a job").toBeGreaterThan(0);

    // Each interrupted job is claimed again by another replica (attempt 2) within its lease + 5 s of the kill.
    const reclaimedAfter = new Map<number, number>();
    await waitFor(
      async () => {
        const rows = await drill.query<JobRow>(`SELECT id, state, attempts, lease_owner AS owner FROM jobs WHERE id = ANY($1::bigint[])`, [interrupted.map((j) => j.id)]);
        for (const row of rows) {
          if (!reclaimedAfter.has(row.id) && row.attempts >= 2 && !row.owner?.includes(`:${victim.pid}:`)) reclaimedAfter.set(row.id, Date.now() - killedAt);
        }
        return reclaimedAfter.size === interrupted.length;
      },
      LEASE_MS + 20_000,
      "the killed replica's jobs are claimed again",
    );
    for (const [id, ms] of reclaimedAfter) {
      process.stdout.write(`job ${id} claimed again ${ms} ms after the kill (lease ${LEASE_MS} ms)\n`);
      expect(ms).toBeLessThanOrEqual(LEASE_MS + 5_000);
    }

    lap("jobs claimed again");
    // Every job ends done, once: no job failed or left running, none run more than twice.
    const jobs = await waitFor(
      async () => {
        const rows = await drill.query<JobRow>(`SELECT id, library_id AS library, state, attempts, lease_owner AS owner FROM jobs ORDER BY id`);
        return rows.every((r) => r.state === "done" || r.state === "failed") && rows;
      },
      150_000,
      "every job ends",
      250,
    );
    lap("every job ended");
    expect(jobs).toHaveLength(JOBS);
    expect(jobs.filter((j) => j.state !== "done")).toEqual([]);
    expect(jobs.filter((j) => j.attempts > 2)).toEqual([]);
    expect(new Set(jobs.map((j) => j.library)).size).toBe(JOBS);
    for (const job of interrupted) expect(jobs.find((j) => j.id === job.id)).toMatchObject({ state: "done", attempts: 2 });

    // One live batch per library version, nothing left writing, and every library's snippets as the reference made.
    const batches = await drill.query<{ library: string; live: number; writing: number }>(
      `SELECT library_id AS library, count(*) FILTER (WHERE state = 'live')::int AS live, count(*) FILTER (WHERE state = 'writing')::int AS writing
       FROM snippet_batches GROUP BY library_id, version`,
    );
    expect(batches).toHaveLength(JOBS);
    expect(batches.filter((b) => b.live !== 1 || b.writing !== 0)).toEqual([]);
    const counts = await drill.liveSnippetCounts();
    expect(libraries.filter((id) => counts.get(id) !== reference)).toEqual([]);
    const states = await drill.query<{ state: string; n: number }>(`SELECT state, count(*)::int AS n FROM libraries GROUP BY state`);
    expect(states).toEqual([{ state: "finalized", n: JOBS }]);

    // The survivors still serve, the interrupted libraries too.
    const interruptedLibrary = jobs.find((j) => j.id === interrupted[0]!.id)!.library;
    for (const replica of [replicas[0]!, replicas[2]!]) {
      expect(replica.child.exitCode).toBeNull();
      const context = await fetch(`${replica.url}/v2/context?libraryId=${interruptedLibrary}&query=tide%20tables&type=json`, { headers: { authorization: `Bearer ${drill.apiKey}` } });
      expect(context.status, await context.clone().text()).toBe(200);
    }
  }, 240_000);
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { startPostgres, type PostgresTestServer } from "../helpers/postgres-server.js";
import { docsOfSize, openDrill, referenceSnippetCount, sameRepositories, waitFor } from "./postgres-drill-fixture.js";

// A clean stop (SIGTERM) of a replica mid-job gives the job back (brief of issue 34's drills, part 4), and the
// interrupted claim is not counted as an attempt (issue 34, done-when 2: rolling restarts must not use attempts up).
let postgres: PostgresTestServer;
let git: GitServer;

beforeAll(async () => {
  [postgres, git] = await Promise.all([startPostgres(), startGitServer("ghp_unused-token-for-private-repos")]);
});
afterAll(async () => {
  await git?.close();
  await postgres?.stop();
});

interface JobRow {
  id: number;
  state: string;
  attempts: number;
  owner: string | null;
}

describe("a replica stopped cleanly (SIGTERM) mid-job", () => {
  it("gives its job back: another replica takes the job at once, not after the lease, and it ends done as attempt 1", async () => {
    const lease = 30_000;
    // Each ingestion waits 20 s after its fetch (a failpoint): the stop always comes while the job is under way, never
    // after it ended on a fast machine.
    const stopDrill = await openDrill(postgres, git, { LDS_JOB_LEASE_MS: String(lease), LDS_FAILPOINT: "ingestion-under-way" });
    try {
      // Jobs long enough to be stopped in the middle: many pages each.
      const repos = await sameRepositories(git, "stop", "atlas", 2, docsOfSize(300));
      const reference = await referenceSnippetCount(git, repos[0]!);
      const replicas = await stopDrill.startReplicas(2);
      const libraries = await stopDrill.submitAll(replicas, repos);
      const runningOn = (pid: number) => stopDrill.query<JobRow>(`SELECT id, state, attempts, lease_owner AS owner FROM jobs WHERE state = 'running' AND lease_owner LIKE $1`, [`%:${pid}:%`]);
      let given: JobRow[] = [];
      const victim = await waitFor(
        async () => {
          for (const replica of replicas) {
            given = await runningOn(replica.pid);
            if (given.length > 0) return replica;
          }
          return undefined;
        },
        60_000,
        "a replica runs a job",
      );
      const survivor = replicas.find((r) => r !== victim)!;
      // The jobs it runs now: each waits 20 s after its fetch (the failpoint), so the stop comes while they are under
      // way. Taken at once by the survivor, maybe before the stopped replica has exited: measured from the signal.
      const stoppedAt = Date.now();
      // SIGTERM and a wait for the exit (the helper's stop() lets execa SIGKILL a replica slower than 5 s to stop).
      process.kill(victim.child.pid!, "SIGTERM");
      await victim.child;
      // Taken by the survivor well before the 30 s lease would have passed.
      await waitFor(
        async () => {
          const rows = await stopDrill.query<JobRow>(`SELECT id, state, attempts, lease_owner AS owner FROM jobs WHERE id = ANY($1::bigint[])`, [given.map((j) => j.id)]);
          return rows.every((r) => r.owner?.includes(`:${survivor.pid}:`));
        },
        10_000,
        "the survivor takes the job",
      ).catch(async (err: Error) => {
        const rows = await stopDrill.query(`SELECT id, state, attempts, lease_owner, lease_until, updated_at FROM jobs`);
        const ended = await victim.child;
        throw new Error(
          `${err.message}: ${JSON.stringify(rows)}\nsurvivor ${survivor.pid}, victim ${victim.pid} (exit ${ended.exitCode}, signal ${ended.signal}):\n${victim.output().slice(-3000)}\n${String(ended.stderr).slice(-2000)}`,
        );
      });
      const takenAfter = Date.now() - stoppedAt;
      process.stdout.write(`the stopped replica's job was taken ${takenAfter} ms after the stop (lease ${lease} ms)\n`);
      expect(takenAfter).toBeLessThan(10_000);
      const jobs = await waitFor(
        async () => {
          const rows = await stopDrill.query<JobRow>(`SELECT id, state, attempts FROM jobs`);
          return rows.every((r) => r.state === "done" || r.state === "failed") && rows;
        },
        120_000,
        "the jobs end",
        250,
      );
      expect(jobs.filter((j) => j.state !== "done")).toEqual([]);
      // The stopped replica's claim did not count: the jobs it gave back were finished by the survivor's first attempt
      // (and no other job was interrupted).
      expect(given.length).toBeGreaterThan(0);
      expect(given.map((g) => g.attempts)).toEqual(given.map(() => 1));
      expect(jobs.map((j) => ({ id: j.id, attempts: j.attempts }))).toEqual(jobs.map((j) => ({ id: j.id, attempts: 1 })));
      const counts = await stopDrill.liveSnippetCounts();
      expect(libraries.map((id) => counts.get(id))).toEqual([reference, reference]);
    } finally {
      await stopDrill.close();
    }
  }, 240_000);
});

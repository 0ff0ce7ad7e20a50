import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { startPostgres, type PostgresTestServer } from "../helpers/postgres-server.js";
import { docsOfSize, openDrill, referenceSnippetCount, sameRepositories, waitFor, type Drill, type Replica } from "./postgres-drill-fixture.js";

// Issue 34, "Done when" 7: the PostgreSQL cluster restarted while two replicas serve requests and run jobs.
const LEASE_MS = 3_000;
const CONNECT_TIMEOUT_MS = 2_000;
const STATEMENT_TIMEOUT_MS = 5_000;
/** A request answered later than this hung: past the connect timeout and the statement timeout (with pg's 2 s margin). */
const DEADLINE_MS = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 2_000;
let postgres: PostgresTestServer;
let git: GitServer;
let drill: Drill & { close(): Promise<void> };

beforeAll(async () => {
  [postgres, git] = await Promise.all([startPostgres(), startGitServer("ghp_unused-token-for-private-repos")]);
  drill = await openDrill(postgres, git, {
    LDS_JOB_LEASE_MS: String(LEASE_MS),
    LDS_DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    LDS_DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
  });
});
afterAll(async () => {
  await drill?.close();
  await git?.close();
  await postgres?.stop();
});

interface Answer {
  replica: number;
  route: string;
  at: number;
  ms: number;
  status: number;
  body: { error?: string; message?: string } | undefined;
}

/** Requests to every replica, one after another per replica, each with a client-side deadline, until stopped. */
function requestLoop(replicas: Replica[], apiKey: string, libraryId: string) {
  const answers: Answer[] = [];
  const hung: string[] = [];
  let stopped = false;
  const routes = [`/v2/context?libraryId=${libraryId}&query=${encodeURIComponent("tide tables harbour")}&type=json`, `/v2/libs/search?libraryName=harbour&query=tides`, `/api/ready`];
  // One loop per replica and route, so that a slow answer on one route does not delay the others' first try.
  const loops = replicas.flatMap((replica, index) =>
    routes.map(async (route) => {
      while (!stopped) {
        const at = Date.now();
        try {
          const response = await fetch(replica.url + route, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(DEADLINE_MS) });
          const text = await response.text();
          let body: Answer["body"];
          try {
            body = JSON.parse(text) as Answer["body"];
          } catch {
            body = undefined;
          }
          answers.push({ replica: index, route: route.split("?")[0]!, at, ms: Date.now() - at, status: response.status, body });
        } catch (err) {
          hung.push(`replica ${index} ${route}: ${(err as Error).name} after ${Date.now() - at} ms`);
          // A replica that no longer accepts connections has died: its own output says why.
          if (replica.child.exitCode !== null) {
            const { stderr } = await replica.child;
            hung.push(`replica ${index} exited ${replica.child.exitCode}: ${String(stderr).slice(-3000)} ${replica.output().slice(-3000)}`);
            return;
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
  return {
    answers,
    hung,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

describe("a PostgreSQL restart under load (issue 34, done-when 7)", () => {
  it("requests meanwhile answer 503 database_unreachable, both replicas recover by themselves, and interrupted jobs end done", async () => {
    const repos = await sameRepositories(git, "drill", "harbour", 13, docsOfSize(8));
    const reference = await referenceSnippetCount(git, repos[0]!);
    const replicas = await drill.startReplicas(2);

    // One library served before the outage, then jobs running across it.
    const served = await drill.submit(replicas[0]!, repos[0]!);
    await waitFor(async () => (await drill.liveSnippetCounts()).get(served) === reference, 60_000, "the first library is finalized", 200);
    const queued = await drill.submitAll(replicas, repos.slice(1));
    const load = requestLoop(replicas, drill.apiKey, served);
    await waitFor(async () => (await drill.query(`SELECT 1 FROM jobs WHERE state = 'running'`)).length > 0, 60_000, "jobs run");
    await waitFor(async () => load.answers.filter((a) => a.status === 200).length >= 6, 30_000, "requests answered before the outage");

    await postgres.down();
    const downAt = Date.now();
    // The outage lasts until each replica has answered requests of every route during it.
    const during = () => load.answers.filter((a) => a.at >= downAt);
    const summary = (answers: Answer[]) => {
      const counts = new Map<string, number>();
      for (const a of answers) counts.set(`replica ${a.replica} ${a.route} ${a.status} ${a.body?.error ?? ""}`, (counts.get(`replica ${a.replica} ${a.route} ${a.status} ${a.body?.error ?? ""}`) ?? 0) + 1);
      return [...counts].map(([k, n]) => `${k}: ${n}`).join("\n");
    };
    await waitFor(
      async () =>
        replicas.every(
          (_, i) =>
            new Set(
              during()
                .filter((a) => a.replica === i && a.status === 503)
                .map((a) => a.route),
            ).size === 3,
        ),
      30_000,
      "each replica answers 503 on every route during the outage",
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${summary(during())}\nhung: ${load.hung.join("; ")}`);
    });
    const outage = during();
    await postgres.up();
    const upAt = Date.now();
    process.stdout.write(`database down ${upAt - downAt} ms; ${outage.length} requests answered meanwhile\n`);

    // Meanwhile: 503 with {error, message}: database_unreachable, or not_ready from /api/ready; never a hang, never a crash.
    for (const answer of outage.filter((a) => a.status !== 200)) {
      expect(answer.status, JSON.stringify(answer)).toBe(503);
      expect(answer.body?.error, JSON.stringify(answer)).toBe(answer.route === "/api/ready" ? "not_ready" : "database_unreachable");
      expect(answer.body?.message, JSON.stringify(answer)).toEqual(expect.any(String));
    }

    // Both replicas answer every route again within 10 s of the database's return, by themselves.
    const recovered = await waitFor(
      async () => {
        const after = load.answers.filter((a) => a.at >= upAt);
        const ok = replicas.map((_, i) => new Set(after.filter((a) => a.replica === i && a.status === 200).map((a) => a.route)).size === 3);
        return ok.every(Boolean) && Date.now();
      },
      30_000,
      "both replicas answer again",
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${summary(load.answers.filter((a) => a.at >= upAt))}\nhung: ${load.hung.join("; ")}`);
    });
    const trace = load.answers.filter((a) => a.at >= downAt).map((a) => `${a.replica} ${a.route} +${a.at - upAt} ${a.ms}ms ${a.status} ${a.body?.error ?? ""}`);
    process.stdout.write(`${trace.join("\n")}\n`);
    const firstAnswers = replicas.flatMap((_, i) =>
      ["/v2/context", "/v2/libs/search", "/api/ready"].map((route) => {
        const first = load.answers.find((a) => a.at >= upAt && a.replica === i && a.route === route && a.status === 200);
        return `replica ${i} ${route} ${first ? first.at - upAt : "never"} ms`;
      }),
    );
    process.stdout.write(`both replicas answered every route ${recovered - upAt} ms after the database came back (${firstAnswers.join(", ")})\n`);
    // Normal answers to requests sent within 10 s of the return (on a busy 2-core machine an answer itself may take
    // seconds: the time counted is when the replica was asked, not how long the machine took to answer).
    const firstSent = replicas.flatMap((_, i) =>
      ["/v2/context", "/v2/libs/search", "/api/ready"].map((route) => load.answers.find((a) => a.at >= upAt && a.replica === i && a.route === route && a.status === 200)!.at - upAt),
    );
    expect(Math.max(...firstSent)).toBeLessThanOrEqual(10_000);
    await load.stop();
    expect(load.hung).toEqual([]);
    const unexpected = load.answers.filter((a) => a.status !== 200 && a.status !== 503);
    expect(unexpected).toEqual([]);
    for (const replica of replicas) expect(replica.child.exitCode, replica.output().slice(-2000)).toBeNull();

    // Interrupted jobs resume under their leases and end done; every library has all its snippets.
    const jobs = await waitFor(
      async () => {
        const rows = await drill.query<{ id: number; state: string; attempts: number }>(`SELECT id, state, attempts FROM jobs ORDER BY id`);
        return rows.every((r) => r.state === "done" || r.state === "failed") && rows;
      },
      120_000,
      "every job ends",
      250,
    );
    expect(jobs.filter((j) => j.state !== "done")).toEqual([]);
    const counts = await drill.liveSnippetCounts();
    expect([served, ...queued].filter((id) => counts.get(id) !== reference)).toEqual([]);
    const writing = await drill.query(`SELECT library_id FROM snippet_batches WHERE state = 'writing'`);
    expect(writing).toEqual([]);
    for (const replica of replicas) {
      const health = await waitFor(
        async () => {
          const got = (await (await fetch(`${replica.url}/api/health`)).json()) as { search?: { lagBatches: number; listening: boolean } };
          return got.search?.lagBatches === 0 && got.search.listening && got;
        },
        20_000,
        "the replica's search files hold every live batch",
      );
      expect(health).toMatchObject({ status: "ok", search: { caughtUp: true } });
    }
  }, 240_000);
});

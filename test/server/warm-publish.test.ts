import { afterEach, describe, expect, it } from "vitest";
import { documentTree } from "../../bench/lib/docs-repo.js";
import { runCli } from "../helpers/cli.js";
import { startGitServer, type GitServer } from "../helpers/git-server.js";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";

const started: Array<GitServer | TestServer> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await ("stop" in s ? s.stop() : s.close());
});

/** The server's JSON log lines, in the order it wrote them. */
const logOf = (server: TestServer) =>
  server
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg: string; library?: string; snippets?: number; vectors?: number });

const VECTOR_COPY = "vector search: an in-memory copy of a large library's vectors is ready";
const WORD_INDEX = "search: a word index of a large library is ready";

describe("a published batch goes live warm", () => {
  it("has the search threads hold the new batch's word index and vector copy before its ingestion publishes it, at the first ingestion and at a refresh", async () => {
    const git = await startGitServer("unused");
    started.push(git);
    // 700 files of 30 sections: over 20,000 snippets, the size from which the search threads keep copies.
    const repo = await git.createRepo("public", "warm", "docs", documentTree(700));
    const dataDir = tempDir("lds-warm-");
    for (const args of [
      ["teams", "create", "warm", "--plan", "enterprise"],
      ["users", "add", "owner@warm.test", "--team", "warm", "--role", "owner"],
    ]) {
      const r = await runCli("lds", [...args, "--data-dir", dataDir]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host });
    started.push(server);
    const admin = client(server.url);
    expect((await admin.login()).status).toBe(200);

    /** Wait for the n-th "job finished"; answer the log up to it (nothing searches the library meanwhile). */
    const finishedJob = async (n: number) => {
      await eventually(async () => logOf(server).filter((line) => line.msg === "job finished").length >= n, 180_000);
      const log = logOf(server);
      const finished = log.map((line, i) => (line.msg === "job finished" ? i : -1)).filter((i) => i >= 0)[n - 1]!;
      return { log: log.slice(0, finished), snippets: log[finished]!.snippets! };
    };

    const submitted = await admin.post("/api/libraries", { team: "warm", docsRepoUrl: repo.url });
    expect(submitted.status, submitted.text).toBe(202);
    const libraryId = submitted.json.libraryName as string;
    const first = await finishedJob(1);
    expect(first.snippets).toBeGreaterThanOrEqual(20_000);
    // No search asked for them: they were built for the publication, and were ready before the job finished.
    expect(first.log.filter((line) => line.msg.startsWith(VECTOR_COPY))).toEqual([expect.objectContaining({ library: libraryId, vectors: first.snippets })]);
    expect(first.log.filter((line) => line.msg.startsWith(WORD_INDEX))).toEqual([expect.objectContaining({ library: libraryId, snippets: first.snippets })]);

    // A refresh swaps in a new batch of as many snippets: its parts too are ready before the swap.
    await repo.commit(documentTree(700, 1));
    const refreshed = await admin.post("/api/libraries/refresh", { libraryName: libraryId });
    expect(refreshed.status, refreshed.text).toBe(202);
    const second = await finishedJob(2);
    expect(second.log.filter((line) => line.msg.startsWith(VECTOR_COPY))).toHaveLength(2);
    expect(second.log.filter((line) => line.msg.startsWith(WORD_INDEX))).toHaveLength(2);
    expect(second.log.filter((line) => line.msg.startsWith(WORD_INDEX)).at(-1)).toMatchObject({ library: libraryId, snippets: second.snippets });
    // Nothing was given up for lack of room: the replaced batch's parts and the new one's fit the default budgets.
    expect(server.output()).not.toMatch(/LDS_VECTOR_CACHE_MB|LDS_WORD_INDEX_MB/);
  }, 400_000);
});

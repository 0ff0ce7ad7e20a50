import { afterEach, describe, expect, it } from "vitest";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { runCli } from "../helpers/cli.js";
import { eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";
import { wordSource } from "../helpers/words.js";
import { dbOf } from "../helpers/sqlite-db.js";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** A public library of `count` distinct snippets (each has words of its own, so no two rank alike). */
async function bigLibrary(dataDir: string, count: number): Promise<void> {
  const word = wordSource(5);
  const volume = await openVolume(dataDir);
  try {
    dbOf(volume).prepare("INSERT INTO libraries (id, title, source, state) VALUES ('/big/lib', 'big', 'git', 'finalized')").run();
    const snippets = Array.from({ length: count }, (_, i) => ({
      kind: "info" as const,
      title: `${word()} ${word()} part${i}`,
      description: `${word()} ${word()}`,
      language: null,
      content: `${Array.from({ length: 12 }, word).join(" ")} unique${i} token${i % 911}`,
      sourcePath: `docs/${i % 50}.md`,
      anchor: null,
    }));
    await replaceLibrarySnippets(volume, "/big/lib", snippets);
  } finally {
    volume.close();
  }
}

describe("the server's in-memory copies of large libraries' vectors and word indexes", () => {
  it("copies a library of 20,000 snippets at start and answers from it as the scan and FTS5 do; a budget too small is named", async () => {
    const dataDir = tempDir("lds-vcopy-");
    await bigLibrary(dataDir, 20_000);
    const cli = async (...args: string[]) => {
      const r = await runCli("lds", [...args, "--data-dir", dataDir]);
      expect(r.exitCode, r.stderr).toBe(0);
      return r.stdout;
    };
    await cli("teams", "create", "big", "--plan", "enterprise");
    await cli("users", "add", "dev@big.test", "--team", "big", "--role", "owner");
    const key = JSON.parse(await cli("keys", "create", "--email", "dev@big.test", "--json")).key as string;
    const questions = ["retry timeout for the proxy", "restore a backup archive", "worker thread pool lock", "cookie session upload"];
    const ask = async (server: TestServer, query: string) => {
      const response = await fetch(`${server.url}/v2/context?${new URLSearchParams({ libraryId: "/big/lib", query, type: "json" })}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { infoSnippets: Array<{ pageId: string; content: string }> };
      return body.infoSnippets.map((s) => s.content);
    };
    const lineOf = (server: TestServer, text: string) =>
      server
        .output()
        .split("\n")
        .find((line) => line.includes(text));

    // Too small a budget: no copy, every search scans as stored (the reference answers), and the operator is told
    // which setting to raise.
    const scanning = await startServer(dataDir, { LDS_VECTOR_CACHE_MB: "1", LDS_WORD_INDEX_MB: "1" });
    servers.push(scanning);
    const exact = [];
    for (const q of questions) exact.push(await ask(scanning, q));
    const warning = await eventually(async () => lineOf(scanning, "LDS_VECTOR_CACHE_MB"), 60_000);
    expect(JSON.parse(warning)).toMatchObject({ level: 40, library: "/big/lib", budgetMib: 1 });
    expect(JSON.parse(warning).msg).toMatch(
      /^vector search: the vectors of \/big\/lib need more than the 1 MiB of LDS_VECTOR_CACHE_MB .* Raise LDS_VECTOR_CACHE_MB \(a copy takes 396 bytes per snippet\) and restart the server/,
    );
    expect(lineOf(scanning, "in-memory copy of a large library")).toBeUndefined();
    const wordWarning = await eventually(async () => lineOf(scanning, "LDS_WORD_INDEX_MB"), 60_000);
    expect(JSON.parse(wordWarning)).toMatchObject({ level: 40, library: "/big/lib", budgetMib: 1 });
    expect(JSON.parse(wordWarning).msg).toMatch(
      /^search: the word index of \/big\/lib needs more than the 1 MiB of LDS_WORD_INDEX_MB, so its BM25 rankings are computed by SQLite .* Raise LDS_WORD_INDEX_MB \(an index takes about \d+ bytes per snippet\) and restart the server/,
    );
    expect(lineOf(scanning, "word index of a large library is ready")).toBeUndefined();
    await scanning.stop();
    servers.pop();

    // The default budget: the copy is made at start, before any search, and answers as the scan did.
    const copying = await startServer(dataDir);
    servers.push(copying);
    const ready = await eventually(async () => lineOf(copying, "in-memory copy of a large library"), 60_000);
    expect(JSON.parse(ready)).toMatchObject({ level: 30, library: "/big/lib", vectors: 20_000 });
    const indexed = await eventually(async () => lineOf(copying, "word index of a large library is ready"), 60_000);
    expect(JSON.parse(indexed)).toMatchObject({ level: 30, library: "/big/lib", snippets: 20_000 });
    for (const [i, q] of questions.entries()) {
      const answer = await ask(copying, q);
      expect(answer.length).toBeGreaterThan(0);
      expect(answer).toEqual(exact[i]);
    }
    expect(lineOf(copying, "LDS_VECTOR_CACHE_MB")).toBeUndefined();
    expect(lineOf(copying, "LDS_WORD_INDEX_MB")).toBeUndefined();
  }, 120_000);
});

import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { LdsError } from "../../src/errors.js";
import { purgeRetiredBatches } from "../../src/indexing/purge-retired.js";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import { startSnippetWriterThread, type SnippetWriterThread } from "../../src/volume/snippet-writer-thread.js";
import { tempDir } from "../helpers/temp.js";
import { vectorsOf } from "../helpers/volume.js";
import { dbOf } from "../helpers/sqlite-db.js";

const row = (i: number) => ({ kind: "info" as const, title: `retry ${i}`, description: "", language: null, content: `socket timeout ${i}`, sourcePath: "a.md", tokens: 5, pageTitle: null });
const snippet = (i: number) => ({ kind: "info" as const, title: `retry ${i}`, description: "", language: null, content: `socket timeout ${i}`, sourcePath: "a.md", anchor: null, tokens: 5 });

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function setUp(): Promise<{ volume: OpenVolume; writer: SnippetWriterThread; failures: Error[] }> {
  const volume = await openVolume(tempDir());
  dbOf(volume).prepare("INSERT INTO libraries (id, title, source, state) VALUES ('/a/one', 'one', 'git', 'finalized')").run();
  open.push(volume);
  const failures: Error[] = [];
  const writer = startSnippetWriterThread(volume.paths, volume, (err) => failures.push(err));
  open.push(writer);
  volume.snippetWriter = writer;
  return { volume, writer, failures };
}

/** The longest pause of the event loop while `work` runs, as a 10 ms ticker sees it. */
async function longestPause<T>(work: () => Promise<T>): Promise<{ result: T; pauseMs: number }> {
  let last = performance.now();
  let pauseMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    pauseMs = Math.max(pauseMs, now - last);
    last = now;
  }, 10);
  try {
    return { result: await work(), pauseMs };
  } finally {
    clearInterval(ticker);
  }
}

describe("the server's snippet writer thread", () => {
  it("writes on its own thread: the event loop keeps turning while a write waits on the database, and reads see what it wrote", async () => {
    const { volume, writer } = await setUp();
    const batch = await volume.store.snippets.openBatch("/a/one", "");
    const target = { libraryId: "/a/one", version: "", batch };
    const rows = Array.from({ length: 40 }, (_, i) => row(i));
    const vectors = await volume.embedder.embed(rows.map((r) => r.content));

    // Another connection holds lds.db's write lock for a second, as a disk that stalls a commit would: the writer
    // thread waits for it (busy_timeout), the event loop does not, and releases it on time.
    const holder = new Database(volume.engine.files(volume.paths).records);
    open.push(holder);
    holder.exec("BEGIN IMMEDIATE");
    const released = new Promise<number>((resolve) => {
      const started = performance.now();
      setTimeout(() => {
        holder.exec("COMMIT");
        resolve(performance.now() - started);
      }, 1000);
    });
    const { result: ids, pauseMs } = await longestPause(() => writer.append(target, rows, vectors as Float32Array[]));
    expect(await released).toBeLessThan(1500);
    expect(pauseMs).toBeLessThan(400);
    expect(ids).toHaveLength(40);

    await volume.store.snippets.publishBatch("/a/one", "", batch);
    expect(await volume.store.snippets.count("/a/one", "")).toBe(40);
    expect(ids.every((id) => vectorsOf(volume).has(id))).toBe(true);
  });

  it("carries an error's code across the thread: a batch another ingestion replaced is not written to", async () => {
    const { volume, writer } = await setUp();
    const batch = await volume.store.snippets.openBatch("/a/one", "");
    await volume.store.snippets.openBatch("/a/one", "");
    const attempt = writer.append({ libraryId: "/a/one", version: "", batch }, [row(1)], [new Float32Array(volume.embedder.dimensions)]);
    await expect(attempt).rejects.toBeInstanceOf(LdsError);
    await expect(attempt).rejects.toMatchObject({ code: "ingestion_superseded" });
  });

  it("ingests and deletes the replaced batch through the thread, vectors with their rows", async () => {
    const { volume } = await setUp();
    await replaceLibrarySnippets(
      volume,
      "/a/one",
      Array.from({ length: 600 }, (_, i) => snippet(i)),
    );
    const first = dbOf(volume).prepare("SELECT id FROM snippets WHERE library_id = '/a/one'").pluck().all() as number[];
    await replaceLibrarySnippets(
      volume,
      "/a/one",
      Array.from({ length: 300 }, (_, i) => snippet(i + 1000)),
    );
    expect(await purgeRetiredBatches(volume)).toBe(0);
    const second = dbOf(volume).prepare("SELECT id FROM snippets WHERE library_id = '/a/one'").pluck().all() as number[];
    expect(second).toHaveLength(300);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    expect(first.some((id) => vectorsOf(volume).has(id))).toBe(false);
    expect(second.every((id) => vectorsOf(volume).has(id))).toBe(true);
  });

  it("leaves the served content as it was when an ingestion fails while its previous chunk is being written", async () => {
    const { volume } = await setUp();
    await replaceLibrarySnippets(
      volume,
      "/a/one",
      Array.from({ length: 300 }, (_, i) => snippet(i)),
    );
    const served = dbOf(volume).prepare("SELECT id FROM snippets WHERE library_id = '/a/one' ORDER BY id").pluck().all() as number[];
    // The source fails after two chunks: the second is still on its way to the writer thread when it does.
    function* failing() {
      for (let i = 0; i < 600; i++) yield snippet(1000 + i);
      throw new Error("the repository could not be read further");
    }
    await expect(replaceLibrarySnippets(volume, "/a/one", failing())).rejects.toThrow("could not be read further");
    expect(await purgeRetiredBatches(volume)).toBe(0);
    expect(dbOf(volume).prepare("SELECT id FROM snippets WHERE library_id = '/a/one' ORDER BY id").pluck().all()).toEqual(served);
    expect(await volume.store.snippets.count("/a/one", "")).toBe(300);
    expect(served.every((id) => vectorsOf(volume).has(id))).toBe(true);
    expect(vectorsOf(volume).count()).toBe(300);
  });

  it("waits for the writes under way when it closes", async () => {
    const { volume, writer } = await setUp();
    const batch = await volume.store.snippets.openBatch("/a/one", "");
    const rows = Array.from({ length: 250 }, (_, i) => row(i));
    const writing = writer.append({ libraryId: "/a/one", version: "", batch }, rows, (await volume.embedder.embed(rows.map((r) => r.content))) as Float32Array[]);
    await writer.close();
    expect(await writing).toHaveLength(250);
  });

  it("writes on the event loop again, and says so once, when its thread cannot work", async () => {
    const volume = await openVolume(tempDir());
    open.push(volume);
    dbOf(volume).prepare("INSERT INTO libraries (id, title, source, state) VALUES ('/a/one', 'one', 'git', 'finalized')").run();
    const failures: Error[] = [];
    const broken = startSnippetWriterThread({ ...volume.paths, root: `${volume.paths.root}/missing` }, volume, (err) => failures.push(err));
    open.push(broken);
    volume.snippetWriter = broken;
    await expect.poll(() => failures.length, { timeout: 20_000 }).toBe(1);
    expect(await replaceLibrarySnippets(volume, "/a/one", [snippet(1), snippet(2)])).toBe(2);
    expect(await volume.store.snippets.count("/a/one", "")).toBe(2);
    expect(failures).toHaveLength(1);
  });
});

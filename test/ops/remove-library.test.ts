import { describe, expect, it, vi } from "vitest";
import { cliActor } from "../../src/ops/actor.js";
import { removeLibrary } from "../../src/ops/remove-library.js";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import type { Snippet } from "../../src/indexing/snippet.js";
import { createVectorSearchWorker } from "../../src/index/sqlite/knn-worker.js";
import type { SqliteSearchIndex } from "../../src/index/sqlite/sqlite-search-index.js";
import { partitionOf } from "../../src/index/sqlite/vector-index.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { tempDir } from "../helpers/temp.js";
import { vectorsOf } from "../helpers/volume.js";
import { dbOf } from "../helpers/sqlite-db.js";

const snippets = (n: number, tag: string): Snippet[] =>
  Array.from({ length: n }, (_, i) => ({ kind: "info", title: `${tag} ${i}`, description: "", language: null, content: `${tag} content ${i}`, sourcePath: "a.md", anchor: null }));

describe("removing a library", () => {
  it("empties every version at once, deletes its rows and vectors in chunks, and leaves other libraries alone", async () => {
    const volume = await openVolume(tempDir());
    try {
      const count = (sql: string) => dbOf(volume).prepare(sql).pluck().get() as number;
      dbOf(volume).prepare("INSERT INTO libraries (id, title, source) VALUES ('/big/lib', 'big', 'git'), ('/other/lib', 'other', 'git')").run();
      // Rows from before snippet batches (batch 0), then the current content and a pinned version written as batches.
      dbOf(volume).prepare("INSERT INTO snippets (library_id, version, kind, title, content) VALUES ('/big/lib', 'v0', 'info', 'legacy', 'legacy text')").run();
      await replaceLibrarySnippets(volume, "/big/lib", snippets(1200, "current"));
      await replaceLibrarySnippets(volume, "/big/lib", snippets(30, "pinned"), "v1");
      await replaceLibrarySnippets(volume, "/other/lib", snippets(5, "other"));

      expect(await removeLibrary(volume, cliActor("tester"), "/big/lib")).toEqual({ snippets: 1231 });
      expect(count("SELECT count(*) FROM snippets WHERE library_id = '/big/lib'")).toBe(0);
      expect(count("SELECT count(*) FROM snippet_batches WHERE library_id = '/big/lib'")).toBe(0);
      expect(count("SELECT count(*) FROM libraries WHERE id = '/big/lib'")).toBe(0);
      expect(await volume.store.snippets.count("/other/lib")).toBe(5);
      expect(vectorsOf(volume).count()).toBe(5);
      const [logged] = await volume.store.audit.list(1);
      expect(logged).toMatchObject({ actor: "cli:tester", action: "library.remove", subject: "/big/lib", details: { snippets: 1231 } });
    } finally {
      volume.close();
    }
  });

  it("has the search threads drop each version's emptied batch's in-memory parts at once, as a publication does", async () => {
    const volume = await openVolume(tempDir());
    // The server's search threads (real ones), which keep in-memory parts of large batches until told they are retired.
    const files = volume.engine.files(volume.paths);
    const threads = createVectorSearchWorker(files.vectors, 30_000, { budgetBytes: 64 * 2 ** 20, minVectors: 1000 }, () => {}, {
      storeFile: files.records,
      options: { budgetBytes: 64 * 2 ** 20, minRows: 1000 },
    });
    (volume.index as SqliteSearchIndex).useSearchThreads(threads);
    try {
      dbOf(volume).prepare("INSERT INTO libraries (id, title, source) VALUES ('/big/lib', 'big', 'git'), ('/other/lib', 'other', 'git')").run();
      await replaceLibrarySnippets(volume, "/big/lib", snippets(1200, "current"));
      await replaceLibrarySnippets(volume, "/big/lib", snippets(30, "pinned"), "v1");
      await replaceLibrarySnippets(volume, "/other/lib", snippets(5, "other"));
      const live = [partitionOf("/big/lib", "", await volume.store.snippets.liveBatch("/big/lib", "")), partitionOf("/big/lib", "v1", await volume.store.snippets.liveBatch("/big/lib", "v1"))];
      // The current content's parts are in memory, as a search or the publication left them.
      await threads.warm(live[0]!);
      const retired = vi.spyOn(threads, "retire");
      await removeLibrary(volume, cliActor("tester"), "/big/lib");
      expect(retired.mock.calls.map(([partition]) => partition).sort()).toEqual([...live].sort());
    } finally {
      await threads.close();
      volume.close();
    }
  });

  it("is refused while a job of the library waits, before anything is emptied", async () => {
    const volume = await openVolume(tempDir());
    try {
      dbOf(volume).prepare("INSERT INTO libraries (id, title, source) VALUES ('/busy/lib', 'busy', 'git')").run();
      await replaceLibrarySnippets(volume, "/busy/lib", snippets(20, "served"));
      // A job for a pinned version counts too: it would write into a library that is gone.
      dbOf(volume).prepare("INSERT INTO jobs (library_id, kind, state, payload) VALUES ('/busy/lib', 'ingest', 'queued', '{\"version\":\"v2\"}')").run();
      await expect(removeLibrary(volume, cliActor("tester"), "/busy/lib")).rejects.toMatchObject({ code: "library_busy" });
      expect(await volume.store.snippets.count("/busy/lib")).toBe(20);
      await expect(removeLibrary(volume, cliActor("tester"), "/no/such")).rejects.toMatchObject({ code: "library_not_found" });
    } finally {
      volume.close();
    }
  });
});

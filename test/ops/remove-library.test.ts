import { describe, expect, it } from "vitest";
import { cliActor } from "../../src/ops/actor.js";
import { removeLibrary } from "../../src/ops/remove-library.js";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import type { Snippet } from "../../src/indexing/snippet.js";
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

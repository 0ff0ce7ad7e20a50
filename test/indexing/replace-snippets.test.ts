import { describe, expect, it } from "vitest";
import { replaceLibrarySnippets } from "../../src/indexing/replace-snippets.js";
import type { Snippet } from "../../src/indexing/snippet.js";
import { openVolume } from "../../src/volume/open-volume.js";
import type { Embedder } from "../../src/vectors/embedder.js";
import { tempDir } from "../helpers/temp.js";

/** A cheap embedder: this test is about the swap, not the vectors. */
const tiny: Embedder = { id: "test-4", dimensions: 4, embed: async (texts) => texts.map(() => new Float32Array([1, 0, 0, 0])) };
const snippets = (n: number, tag: string): Snippet[] =>
  Array.from({ length: n }, (_, i) => ({ kind: "info", title: `${tag} ${i}`, description: "", language: null, content: `${tag} content ${i}`, sourcePath: "a.md", anchor: null }));

describe("replacing a library's snippets", () => {
  it("swaps a library larger than SQLite's bound-variable limit, and leaves other libraries alone", async () => {
    const volume = openVolume(tempDir(), tiny);
    try {
      const { db } = volume;
      db.prepare("INSERT INTO libraries (id, title, source) VALUES ('/big/lib', 'big', 'git'), ('/other/lib', 'other', 'git')").run();
      await replaceLibrarySnippets(volume, "/other/lib", snippets(3, "other"));
      await replaceLibrarySnippets(volume, "/big/lib", snippets(40_000, "old"));
      await replaceLibrarySnippets(volume, "/big/lib", snippets(40_001, "new"));
      const count = (sql: string) => db.prepare(sql).pluck().get();
      expect(count("SELECT count(*) FROM snippets WHERE library_id = '/big/lib'")).toBe(40_001);
      expect(count("SELECT count(*) FROM snippets WHERE library_id = '/big/lib' AND title LIKE 'old %'")).toBe(0);
      expect(count("SELECT count(*) FROM snippets WHERE library_id = '/other/lib'")).toBe(3);
      expect(volume.vectors.count()).toBe(40_004);
    } finally {
      volume.close();
    }
  });
});

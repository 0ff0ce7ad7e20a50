import { describe, expect, it } from "vitest";
import { replaceLibrarySnippets, WRITE_CHUNK } from "../../src/indexing/replace-snippets.js";
import { purgeRetiredBatches } from "../../src/indexing/purge-retired.js";
import type { Snippet } from "../../src/indexing/snippet.js";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import type { Embedder } from "../../src/vectors/embedder.js";
import { LdsError } from "../../src/errors.js";
import { rankSnippets } from "../../src/search/rank-snippets.js";
import { tempDir } from "../helpers/temp.js";
import { vectorsOf } from "../helpers/volume.js";
import { dbOf } from "../helpers/sqlite-db.js";

/** A cheap embedder: these tests are about the swap, not the vectors. */
const tiny: Embedder = { id: "test-4", dimensions: 4, embed: async (texts) => texts.map(() => new Float32Array([1, 0, 0, 0])) };
const snippet = (tag: string, i: number): Snippet => ({ kind: "info", title: `${tag} ${i}`, description: "", language: null, content: `${tag} content ${i}`, sourcePath: "a.md", anchor: null });
const snippets = (n: number, tag: string): Snippet[] => Array.from({ length: n }, (_, i) => snippet(tag, i));

function withVolume(test: (volume: OpenVolume, count: (sql: string) => number) => Promise<void>) {
  return async () => {
    const volume = await openVolume(tempDir(), tiny);
    try {
      dbOf(volume).prepare("INSERT INTO libraries (id, title, source) VALUES ('/big/lib', 'big', 'git'), ('/other/lib', 'other', 'git')").run();
      await test(volume, (sql) => dbOf(volume).prepare(sql).pluck().get() as number);
    } finally {
      volume.close();
    }
  };
}

describe("replacing a library's snippets (snippet batches)", () => {
  it(
    "swaps a library larger than SQLite's bound-variable limit, deletes the old batch and its vectors, and leaves other libraries alone",
    withVolume(async (volume, count) => {
      await replaceLibrarySnippets(volume, "/other/lib", snippets(3, "other"));
      await replaceLibrarySnippets(volume, "/big/lib", snippets(40_000, "old"));
      await replaceLibrarySnippets(volume, "/big/lib", snippets(40_001, "new"));
      expect(count("SELECT count(*) FROM snippets WHERE library_id = '/big/lib'")).toBe(40_001);
      expect(count("SELECT count(*) FROM snippets WHERE library_id = '/big/lib' AND title LIKE 'old %'")).toBe(0);
      expect(count("SELECT count(*) FROM snippets WHERE library_id = '/other/lib'")).toBe(3);
      expect(await volume.store.snippets.count("/big/lib")).toBe(40_001);
      expect(vectorsOf(volume).count()).toBe(40_004);
      expect(count("SELECT count(*) FROM snippet_batches WHERE state <> 'live'")).toBe(0);
    }),
  );

  it(
    "reads the snippets as they come: the first chunks are written before the source has produced the rest",
    withVolume(async (volume, count) => {
      const writtenWhenAsked: number[] = [];
      function* source() {
        for (let i = 0; i < WRITE_CHUNK * 4; i++) {
          if (i % WRITE_CHUNK === 0) writtenWhenAsked.push(count("SELECT count(*) FROM snippets"));
          yield snippet("streamed", i);
        }
      }
      expect(await replaceLibrarySnippets(volume, "/big/lib", source())).toBe(WRITE_CHUNK * 4);
      // Before chunk k was produced, the k chunks before it were already in the database: nothing held them all.
      expect(writtenWhenAsked).toEqual([0, WRITE_CHUNK, WRITE_CHUNK * 2, WRITE_CHUNK * 3]);
    }),
  );

  it(
    "serves the old snippets until the new batch is published, to every reader, then the new ones only",
    withVolume(async (volume, count) => {
      await replaceLibrarySnippets(volume, "/big/lib", snippets(600, "old"));
      const seen: Array<{ n: number; titles: string[] }> = [];
      async function* source() {
        for (let i = 0; i < 1200; i++) {
          if (i === 700) {
            // Half written: searches, counts and loads still see the old content, all of it.
            const ids = await rankSnippets(volume, { libraryId: "/big/lib", version: "" }, "content", "fused", 1000);
            const rows = await volume.store.snippets.load("/big/lib", "", ids);
            seen.push({ n: await volume.store.snippets.count("/big/lib"), titles: rows.map((r) => r.title.split(" ")[0]!) });
          }
          yield snippet("new", i);
        }
      }
      await replaceLibrarySnippets(volume, "/big/lib", source());
      expect(seen[0]!.n).toBe(600);
      expect(seen[0]!.titles.length).toBeGreaterThan(0);
      expect(new Set(seen[0]!.titles)).toEqual(new Set(["old"]));
      const ids = await rankSnippets(volume, { libraryId: "/big/lib", version: "" }, "content", "fused", 1000);
      expect(new Set((await volume.store.snippets.load("/big/lib", "", ids)).map((r) => r.title.split(" ")[0]))).toEqual(new Set(["new"]));
      expect(count("SELECT count(*) FROM snippets")).toBe(1200);
    }),
  );

  it(
    "keeps the old snippets when the source fails or produces nothing, and deletes what the failed batch wrote",
    withVolume(async (volume, count) => {
      await replaceLibrarySnippets(volume, "/big/lib", snippets(10, "old"));
      function* failing() {
        yield* snippets(WRITE_CHUNK * 2 + 5, "broken");
        throw new Error("the clone went away");
      }
      await expect(replaceLibrarySnippets(volume, "/big/lib", failing())).rejects.toThrow("the clone went away");
      const empty = new LdsError("no_snippets_found", "nothing to index");
      await expect(replaceLibrarySnippets(volume, "/big/lib", [], "", { whenEmpty: () => empty })).rejects.toBe(empty);
      expect(await volume.store.snippets.count("/big/lib")).toBe(10);
      expect(count("SELECT count(*) FROM snippets")).toBe(10);
      expect(vectorsOf(volume).count()).toBe(10);
      expect(count("SELECT count(*) FROM snippet_batches WHERE state <> 'live'")).toBe(0);
    }),
  );

  it(
    "lets the ingestion started last win: an overtaken one stops with ingestion_superseded and changes nothing",
    withVolume(async (volume, count) => {
      await replaceLibrarySnippets(volume, "/big/lib", snippets(5, "old"));
      let second: Promise<number> | undefined;
      function* overtaken() {
        for (let i = 0; i < WRITE_CHUNK * 2; i++) {
          // Another ingestion of the same library starts while this one is half way.
          if (i === WRITE_CHUNK + 1) second = replaceLibrarySnippets(volume, "/big/lib", snippets(7, "winner"));
          yield snippet("overtaken", i);
        }
      }
      await expect(replaceLibrarySnippets(volume, "/big/lib", overtaken())).rejects.toMatchObject({ code: "ingestion_superseded" });
      expect(await second).toBe(7);
      expect(await volume.store.snippets.count("/big/lib")).toBe(7);
      await purgeRetiredBatches(volume);
      expect(count("SELECT count(*) FROM snippets")).toBe(7);
      expect(vectorsOf(volume).count()).toBe(7);
    }),
  );

  it(
    "takes over rows from before snippet batches (schema 10) and a batch left unfinished by a crash",
    withVolume(async (volume, count) => {
      // Rows written as schema 10 wrote them: batch 0, no batch record; they are served.
      dbOf(volume).prepare("INSERT INTO snippets (library_id, kind, title, content) VALUES ('/big/lib', 'info', 'legacy', 'legacy content')").run();
      expect(await volume.store.snippets.count("/big/lib")).toBe(1);
      // A crashed ingestion: its batch is still 'writing', its rows unseen.
      const crashed = await volume.store.snippets.openBatch("/big/lib", "");
      await volume.store.snippets.appendToBatch("/big/lib", "", crashed, [{ kind: "info", title: "crashed", description: "", language: null, content: "x", sourcePath: "a.md", tokens: 1, pageTitle: null }]);
      expect(await volume.store.snippets.count("/big/lib")).toBe(1);
      await replaceLibrarySnippets(volume, "/big/lib", snippets(3, "new"));
      expect(await volume.store.snippets.count("/big/lib")).toBe(3);
      expect(count("SELECT count(*) FROM snippets WHERE title IN ('legacy', 'crashed')")).toBe(0);
      expect(count("SELECT count(*) FROM snippet_batches")).toBe(1);
    }),
  );
});

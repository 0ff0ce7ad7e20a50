import { describe, expect, it } from "vitest";
import type { NewSnippet } from "../../../src/store/records.js";
import type { Store } from "../../../src/store/store.js";
import { expectLdsError, freshStore, type OpenStore } from "./harness.js";
import { newLibrary } from "./libraries.contract.js";

export const snippet = (n: number, change: Partial<NewSnippet> = {}): NewSnippet => ({
  kind: n % 2 ? "code" : "info",
  title: `Snippet ${n}`,
  description: `What snippet ${n} shows`,
  language: n % 2 ? "ts" : null,
  content: `content of snippet ${n}`,
  sourcePath: `docs/page-${n}.md#part`,
  tokens: 10 + n,
  pageTitle: n % 2 ? null : `Page ${n}`,
  ...change,
});

/** Rows into an open batch. (The search index is fed apart, from published batches: no callback runs inside.) */
export const append = (store: Store, libraryId: string, version: string, batch: number, rows: NewSnippet[]) => store.snippets.appendToBatch(libraryId, version, batch, rows);

/** A batch opened, filled with `rows` and published; its number and the rows' ids. */
export async function publish(store: Store, libraryId: string, version: string, rows: NewSnippet[]): Promise<{ batch: number; ids: number[] }> {
  const batch = await store.snippets.openBatch(libraryId, version);
  const ids = await append(store, libraryId, version, batch, rows);
  await store.snippets.publishBatch(libraryId, version, batch);
  return { batch, ids };
}

/** Every retired row, chunk by chunk as the purge deletes them: the chunks seen. */
export async function purgeRetired(store: Store, limit: number): Promise<Array<{ batch: number; ids: number[] }>> {
  const seen: Array<{ batch: number; ids: number[] }> = [];
  for (let chunk = await store.snippets.retiredChunk(limit); chunk; chunk = await store.snippets.retiredChunk(limit)) {
    expect(chunk.ids.length).toBeLessThanOrEqual(limit);
    seen.push({ batch: chunk.batch, ids: chunk.ids });
    await store.snippets.deleteRetiredRows(chunk);
  }
  return seen;
}

/**
 * snippets and their batches: a batch is invisible until published, publishing swaps it in whole and retires the one
 * it replaces, a newer batch of the same version supersedes an unfinished one, retired rows go chunk by chunk.
 */
export function describeSnippets(open: OpenStore): void {
  describe("snippets", () => {
    const t = freshStore(open);
    const lib = "/acme/widgets";
    const library = () => t.store.libraries.create(newLibrary(lib));

    it("a batch being written is invisible; published, it is served whole: count, kind, totals, load in the order asked", async () => {
      await library();
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(0);
      const batch = await t.store.snippets.openBatch(lib, "");
      const first = await append(t.store, lib, "", batch, [snippet(1), snippet(2)]);
      const second = await append(t.store, lib, "", batch, [snippet(3)]);
      expect(new Set([...first, ...second]).size).toBe(3);
      expect(await t.store.snippets.count(lib)).toBe(0);
      expect(await t.store.snippets.totals(lib)).toEqual({ n: 0, tokens: 0 });
      expect(await t.store.snippets.load(lib, "", first)).toEqual([]);
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(0);
      expect(await t.store.snippets.countAll()).toBe(3);

      await t.store.snippets.publishBatch(lib, "", batch);
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(batch);
      expect(await t.store.snippets.count(lib)).toBe(3);
      expect(await t.store.snippets.count(lib, "", "code")).toBe(2);
      expect(await t.store.snippets.count(lib, "", "info")).toBe(1);
      expect(await t.store.snippets.totals(lib)).toEqual({ n: 3, tokens: 11 + 12 + 13 });
      const [id1, id2] = first as [number, number];
      const [id3] = second as [number];
      const { tokens: _, ...text2 } = snippet(2);
      expect(await t.store.snippets.load(lib, "", [id3, id1, 999_999, id2])).toEqual([
        expect.objectContaining({ id: id3, title: "Snippet 3" }),
        expect.objectContaining({ id: id1, title: "Snippet 1" }),
        { id: id2, ...text2 },
      ]);
      expect(await t.store.snippets.load(lib, "v1", [id1])).toEqual([]);
      expect(await t.store.snippets.load("/other/lib", "", [id1])).toEqual([]);
    });

    it("publishing a new batch swaps it in whole and retires the old one, whose rows go chunk by chunk", async () => {
      await library();
      const old = await publish(
        t.store,
        lib,
        "",
        [1, 2, 3, 4, 5].map((n) => snippet(n)),
      );
      const next = await t.store.snippets.openBatch(lib, "");
      expect(next).not.toBe(old.batch);
      const nextIds = await append(t.store, lib, "", next, [snippet(6), snippet(7)]);
      // Until the new batch is published, readers keep the old one whole.
      expect(await t.store.snippets.count(lib)).toBe(5);
      expect(await t.store.snippets.retiredChunk(10)).toBeUndefined();
      await t.store.snippets.publishBatch(lib, "", next);
      expect(await t.store.snippets.count(lib)).toBe(2);
      expect(await t.store.snippets.totals(lib)).toEqual({ n: 2, tokens: 16 + 17 });
      expect(await t.store.snippets.load(lib, "", old.ids)).toEqual([]);
      expect((await t.store.snippets.load(lib, "", nextIds)).map((s) => s.id)).toEqual(nextIds);
      expect(await t.store.snippets.countAll()).toBe(7);

      const chunks = await purgeRetired(t.store, 2);
      expect(chunks.map((c) => c.ids.length)).toEqual([2, 2, 1]);
      expect(chunks.every((c) => c.batch === old.batch)).toBe(true);
      expect(chunks.flatMap((c) => c.ids).sort((a, b) => a - b)).toEqual([...old.ids].sort((a, b) => a - b));
      expect(await t.store.snippets.countAll()).toBe(2);
      expect(await t.store.snippets.count(lib)).toBe(2);
    });

    it("opening a batch retires the unfinished one of the same version: the overtaken ingestion gets ingestion_superseded", async () => {
      await library();
      const overtaken = await t.store.snippets.openBatch(lib, "");
      const pinned = await t.store.snippets.openBatch(lib, "v1");
      await append(t.store, lib, "", overtaken, [snippet(1)]);
      const newer = await t.store.snippets.openBatch(lib, "");
      await expectLdsError(append(t.store, lib, "", overtaken, [snippet(2)]), "ingestion_superseded");
      await expectLdsError(t.store.snippets.publishBatch(lib, "", overtaken), "ingestion_superseded");
      // Another version's batch is not touched.
      await append(t.store, lib, "v1", pinned, [snippet(3)]);
      await t.store.snippets.publishBatch(lib, "v1", pinned);
      await append(t.store, lib, "", newer, [snippet(4), snippet(5)]);
      await t.store.snippets.publishBatch(lib, "", newer);
      expect(await t.store.snippets.count(lib)).toBe(2);
      expect(await t.store.snippets.count(lib, "v1")).toBe(1);
      const chunks = await purgeRetired(t.store, 100);
      expect(chunks).toEqual([{ batch: overtaken, ids: expect.any(Array) }]);
      expect(chunks[0]!.ids).toHaveLength(1);
    });

    it("a batch is published once, and only by its own library and version; appending to it after is ingestion_superseded", async () => {
      await library();
      await t.store.libraries.create(newLibrary("/acme/other"));
      const { batch } = await publish(t.store, lib, "", [snippet(1)]);
      await expectLdsError(t.store.snippets.publishBatch(lib, "", batch), "ingestion_superseded");
      await expectLdsError(append(t.store, lib, "", batch, [snippet(2)]), "ingestion_superseded");
      const open = await t.store.snippets.openBatch(lib, "");
      await expectLdsError(append(t.store, "/acme/other", "", open, [snippet(3)]), "ingestion_superseded");
      await expectLdsError(t.store.snippets.publishBatch(lib, "v9", open), "ingestion_superseded");
      await expectLdsError(t.store.snippets.publishBatch(lib, "", open + 1000), "ingestion_superseded");
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(batch);
      expect(await t.store.snippets.count(lib)).toBe(1);
    });

    it("a discarded batch is retired (its rows purged, never served); discarding a published one changes nothing", async () => {
      await library();
      const live = await publish(t.store, lib, "", [snippet(1)]);
      const failed = await t.store.snippets.openBatch(lib, "");
      await append(t.store, lib, "", failed, [snippet(2), snippet(3)]);
      await t.store.snippets.discardBatch(lib, "", failed);
      await expectLdsError(append(t.store, lib, "", failed, [snippet(4)]), "ingestion_superseded");
      await expectLdsError(t.store.snippets.publishBatch(lib, "", failed), "ingestion_superseded");
      await t.store.snippets.discardBatch(lib, "", live.batch);
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(live.batch);
      expect((await purgeRetired(t.store, 10)).map((c) => [c.batch, c.ids.length])).toEqual([[failed, 2]]);
      expect(await t.store.snippets.load(lib, "", live.ids)).toHaveLength(1);
    });

    it("retireUnfinishedAsSoleWriter retires every batch being written, of every library, answering how many", async () => {
      await library();
      await t.store.libraries.create(newLibrary("/acme/other"));
      const live = await publish(t.store, lib, "", [snippet(1)]);
      const a = await t.store.snippets.openBatch(lib, "");
      const b = await t.store.snippets.openBatch("/acme/other", "v2");
      await append(t.store, "/acme/other", "v2", b, [snippet(2)]);
      expect(await t.store.snippets.retireUnfinishedAsSoleWriter()).toBe(2);
      expect(await t.store.snippets.retireUnfinishedAsSoleWriter()).toBe(0);
      await expectLdsError(append(t.store, lib, "", a, [snippet(3)]), "ingestion_superseded");
      await expectLdsError(t.store.snippets.publishBatch("/acme/other", "v2", b), "ingestion_superseded");
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(live.batch);
      expect(await t.store.snippets.count(lib)).toBe(1);
    });

    it("deleteRetiredRows never deletes rows of a live or unfinished batch", async () => {
      await library();
      const live = await publish(t.store, lib, "", [snippet(1), snippet(2)]);
      const writing = await t.store.snippets.openBatch(lib, "v1");
      const writingIds = await append(t.store, lib, "v1", writing, [snippet(3)]);
      await t.store.snippets.deleteRetiredRows({ libraryId: lib, version: "", batch: live.batch, ids: live.ids });
      await t.store.snippets.deleteRetiredRows({ libraryId: lib, version: "v1", batch: writing, ids: writingIds });
      expect(await t.store.snippets.count(lib)).toBe(2);
      expect(await t.store.snippets.countAll()).toBe(3);
    });

    it("answers the versions with rows in any batch, every snippet in pages by id, and distinct batch numbers across libraries", async () => {
      await library();
      await t.store.libraries.create(newLibrary("/acme/other"));
      const a = await publish(t.store, lib, "", [snippet(1), snippet(2)]);
      const b = await publish(t.store, lib, "v2", [snippet(3)]);
      const c = await t.store.snippets.openBatch("/acme/other", "");
      const cIds = await append(t.store, "/acme/other", "", c, [snippet(4), snippet(5)]);
      expect(new Set([a.batch, b.batch, c]).size).toBe(3);
      expect(await t.store.snippets.versions(lib)).toEqual(["", "v2"]);
      expect(await t.store.snippets.versions("/acme/other")).toEqual([""]);
      expect(await t.store.snippets.versions("/nobody/here")).toEqual([]);
      const pages = [];
      for await (const page of t.store.snippets.pages(2)) pages.push(page);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      const all = pages.flat();
      expect(all.map((s) => s.id)).toEqual([...a.ids, ...b.ids, ...cIds].sort((x, y) => x - y));
      expect(all.find((s) => s.id === b.ids[0])).toEqual({
        id: b.ids[0],
        libraryId: lib,
        version: "v2",
        batch: b.batch,
        title: "Snippet 3",
        description: "What snippet 3 shows",
        content: "content of snippet 3",
      });
      expect(await t.store.snippets.totals(lib)).toEqual({ n: 2, tokens: 11 + 12 });
      expect(await t.store.snippets.count(lib, "v2")).toBe(1);
    });

    it("vectors given with the rows (one per row) change nothing served, and go with their rows when purged or removed", async () => {
      await library();
      const vector = (n: number) => Float32Array.from({ length: 8 }, (_, i) => n + i / 8);
      const first = await t.store.snippets.openBatch(lib, "");
      const ids = await t.store.snippets.appendToBatch(lib, "", first, [snippet(1), snippet(2)], [vector(1), vector(2)]);
      expect(await t.store.snippets.appendToBatch(lib, "", first, [], [])).toEqual([]);
      await t.store.snippets.publishBatch(lib, "", first);
      expect((await t.store.snippets.load(lib, "", ids)).map((s) => s.title)).toEqual(["Snippet 1", "Snippet 2"]);
      const second = await t.store.snippets.openBatch(lib, "");
      await t.store.snippets.appendToBatch(lib, "", second, [snippet(3)], [vector(3)]);
      await t.store.snippets.publishBatch(lib, "", second);
      expect(await purgeRetired(t.store, 1)).toEqual([
        { batch: first, ids: [ids[0]] },
        { batch: first, ids: [ids[1]] },
      ]);
      expect(await t.store.snippets.count(lib)).toBe(1);
      expect(await t.store.libraries.remove(lib)).toHaveLength(1);
      expect(await t.store.snippets.countAll()).toBe(0);
    });

    it("vectors that are not one per row are refused (validation_error) and nothing is written", async () => {
      await library();
      const batch = await t.store.snippets.openBatch(lib, "");
      await expectLdsError(t.store.snippets.appendToBatch(lib, "", batch, [snippet(1), snippet(2)], [new Float32Array(8)]), "validation_error");
      await expectLdsError(t.store.snippets.appendToBatch(lib, "", batch, [], [new Float32Array(8)]), "validation_error");
      expect(await t.store.snippets.countAll()).toBe(0);
      await t.store.snippets.publishBatch(lib, "", batch);
      expect(await t.store.snippets.totals(lib)).toEqual({ n: 0, tokens: 0 });
    });

    it("removing a library answers the ids of its snippets of every batch and version, and they are gone", async () => {
      await library();
      await t.store.libraries.create(newLibrary("/acme/kept"));
      const kept = await publish(t.store, "/acme/kept", "", [snippet(9)]);
      const a = await publish(t.store, lib, "", [snippet(1)]);
      const b = await publish(t.store, lib, "", [snippet(2)]);
      const c = await publish(t.store, lib, "v1", [snippet(3)]);
      const d = await t.store.snippets.openBatch(lib, "");
      const dIds = await append(t.store, lib, "", d, [snippet(4)]);
      const removed = await t.store.libraries.remove(lib);
      expect([...removed].sort((x, y) => x - y)).toEqual([...a.ids, ...b.ids, ...c.ids, ...dIds].sort((x, y) => x - y));
      expect(await t.store.snippets.countAll()).toBe(1);
      expect(await t.store.snippets.versions(lib)).toEqual([]);
      expect(await t.store.snippets.liveBatch(lib, "")).toBe(0);
      expect(await purgeRetired(t.store, 10)).toEqual([]);
      expect(await t.store.snippets.load("/acme/kept", "", kept.ids)).toHaveLength(1);
    });
  });
}

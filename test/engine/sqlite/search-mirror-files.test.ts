import fs from "node:fs";
import { expect, it } from "vitest";
import { openSearchMirrorFiles, searchMirrorFolder, type MirrorBatch, type MirrorSnippet } from "../../../src/engine/sqlite/search-mirror-files.js";
import { createHashingEmbedder } from "../../../src/vectors/embedder.js";
import { tempDir } from "../../helpers/temp.js";

const embedder = createHashingEmbedder();
const batch = (n: number, startedAt = `2026-11-27T20:00:0${n}.000Z`): MirrorBatch => ({ libraryId: "/acme/widgets", version: "", batch: n, startedAt });
async function rows(ids: number[]): Promise<MirrorSnippet[]> {
  const texts = ids.map((id) => `configure the widget cache ${id}`);
  const vectors = await embedder.embed(texts);
  return ids.map((id, i) => ({ id, kind: "info", title: `Widget ${id}`, description: "", language: null, content: texts[i]!, sourcePath: `a.md#${id}`, tokens: 5, pageTitle: null, vector: vectors[i] }));
}

it("a batch is served once held, with its records' ids; holding the next one answers it to drop; a half-received batch is gone after a reopen", async () => {
  const dataDir = tempDir();
  const mirror = await openSearchMirrorFiles(dataDir, embedder);
  const b7 = batch(7);
  await mirror.begin(b7);
  await mirror.add(b7, await rows([101, 105, 230]));
  expect(await mirror.index.rank(b7, ["widget"], 10)).toEqual([]);
  expect(mirror.hold(b7)).toBeUndefined();
  expect(mirror.held()).toEqual([b7]);
  expect((await mirror.index.rank(b7, ["widget"], 10)).map((r) => r.id).sort()).toEqual([101, 105, 230]);
  const [query] = await embedder.embed(["configure the widget cache 105"]);
  expect((await mirror.index.nearest(query!, 1, [b7]))[0]!.id).toBe(105);
  // The index's own writes do nothing: the follower alone fills the files.
  await mirror.index.remove([101]);
  expect(await mirror.index.firstWithoutVector([101, 105, 230])).toBeUndefined();

  const b9 = batch(9);
  await mirror.begin(b9);
  await mirror.add(b9, await rows([300]));
  expect(mirror.hold(b9)).toEqual(b7);
  expect(mirror.held()).toEqual([b9]);
  expect((await mirror.index.rank(b9, ["widget"], 10)).map((r) => r.id)).toEqual([300]);
  expect(await mirror.index.firstWithoutVector([101])).toBeUndefined(); // not served, not dropped yet
  await mirror.drop(b7);
  expect(await mirror.index.firstWithoutVector([101])).toBe(101);
  expect((await mirror.index.statistics()).vectors).toBe(1);

  const b12 = batch(12);
  await mirror.begin(b12);
  await mirror.add(b12, await rows([400, 401]));
  mirror.close();
  expect(fs.readdirSync(searchMirrorFolder(dataDir))).toContain("lds.db");

  const reopened = await openSearchMirrorFiles(dataDir, embedder);
  try {
    expect(reopened.held()).toEqual([b9]);
    expect((await reopened.index.statistics()).vectors).toBe(1);
    expect(await reopened.index.firstWithoutVector([400])).toBe(400);
    await reopened.drop(b9);
    expect(reopened.held()).toEqual([]);
    expect((await reopened.index.statistics()).vectors).toBe(0);
  } finally {
    reopened.close();
  }
});

it("files made for another embedder are emptied at open: their batches are fetched again", async () => {
  const dataDir = tempDir();
  const mirror = await openSearchMirrorFiles(dataDir, embedder);
  await mirror.begin(batch(3));
  await mirror.add(batch(3), await rows([1, 2]));
  mirror.hold(batch(3));
  mirror.close();
  const other = await openSearchMirrorFiles(dataDir, createHashingEmbedder(64));
  try {
    expect(other.held()).toEqual([]);
    expect(other.index.stale).toBe(false);
    expect(other.index.dimensions).toBe(64);
  } finally {
    other.close();
  }
});

it("a drop stopped by its signal leaves the batch unserved, and the rest of it is dropped at the next open", async () => {
  const dataDir = tempDir();
  const mirror = await openSearchMirrorFiles(dataDir, embedder);
  const many = Array.from({ length: 250 }, (_, i) => i + 1);
  await mirror.begin(batch(4));
  await mirror.add(batch(4), await rows(many));
  mirror.hold(batch(4));
  const stop = new AbortController();
  stop.abort();
  await mirror.drop(batch(4), stop.signal);
  expect(mirror.held()).toEqual([]);
  expect(await mirror.index.rank(batch(4), ["widget"], 10)).toEqual([]);
  expect((await mirror.index.statistics()).vectors).toBe(150);
  mirror.close();
  const reopened = await openSearchMirrorFiles(dataDir, embedder);
  try {
    expect((await reopened.index.statistics()).vectors).toBe(0);
  } finally {
    reopened.close();
  }
});

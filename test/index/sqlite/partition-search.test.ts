import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../../../src/vectors/embedder.js";
import type { CopyMade } from "../../../src/index/sqlite/partition-cache.js";
import { generationReader } from "../../../src/index/sqlite/partition-generations.js";
import { createPartitionSearch } from "../../../src/index/sqlite/partition-search.js";
import { QuantizedPartitionBuilder } from "../../../src/index/sqlite/quantized-partition.js";
import { openVectorIndex, type VectorIndex } from "../../../src/index/sqlite/vector-index.js";
import { tempDir } from "../../helpers/temp.js";
import { wordSource } from "../../helpers/words.js";

const embedder = createHashingEmbedder();
/** Deterministic snippet-like texts: a few words each, so that queries have near and far answers. */
function texts(count: number, seed: number): string[] {
  const word = wordSource(seed);
  return Array.from({ length: count }, (_, i) => `${Array.from({ length: 6 }, word).join(" ")} item${i % 97}`);
}

async function fill(index: VectorIndex, partition: string, firstId: number, count: number, seed: number): Promise<void> {
  const vectors = await embedder.embed(texts(count, seed));
  index.upsert(vectors.map((vector, i) => ({ snippetId: firstId + i, partition, vector })));
}

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

function setUp(options = { budgetBytes: 64 * 2 ** 20, minVectors: 1000 }) {
  const file = path.join(tempDir(), "vectors.db");
  const index = openVectorIndex(file, embedder);
  const made: CopyMade[] = [];
  const search = createPartitionSearch(file, options, (copy) => made.push(copy));
  const reader = new Database(file, { readonly: true });
  open.push(index, search, reader);
  return { file, index, search, made, generation: (p: string) => generationReader(reader)(p) };
}

const near = (a: number, b: number) => Math.abs(a - b) < 1e-5;

describe("vector search from the worker's quantized copies", () => {
  it("touches every stored vector of a partition through sqlite-vec's tables, and answers as before", async () => {
    const { file, index, search } = setUp();
    await fill(index, "/a/lib", 1, 2500, 7);
    await fill(index, "/b/other", 10_000, 300, 9);
    const [query] = await embedder.embed(["retry timeout"]);
    search.nearest(query!, 20, "/a/lib");
    await search.settled();
    const before = search.nearest(query!, 20, "/a/lib");
    // The tables touch reads (vec0's shadow tables, as this sqlite-vec lays them out): if they were renamed, touch
    // would read nothing and the first searches after a publication would be slow again.
    const reader = new Database(file, { readonly: true });
    open.push(reader);
    expect(reader.prepare("SELECT count(*) FROM vec_snippets_chunks WHERE partition00 = ?").pluck().get("/a/lib")).toBeGreaterThanOrEqual(3);
    expect(reader.prepare("SELECT count(*) FROM vec_snippets_rowids WHERE rowid BETWEEN 1 AND 2500").pluck().get()).toBe(2500);
    // A chunk's row ids: int64 snippet ids, touch reads their places by range.
    const rowids = reader.prepare("SELECT rowids FROM vec_snippets_chunks WHERE partition00 = ? LIMIT 1").pluck().get("/a/lib") as Buffer;
    expect(new BigInt64Array(rowids.buffer.slice(rowids.byteOffset, rowids.byteOffset + rowids.byteLength))[0]).toBe(1n);
    await search.touch("/a/lib");
    await search.touch("/nothing/here");
    expect(search.nearest(query!, 20, "/a/lib")).toEqual(before);
  });

  it("answers from a copy as sqlite-vec's full scan does, once the copy is built in the background", async () => {
    const { index, search, made, generation } = setUp();
    await fill(index, "/a/lib", 1, 3000, 7);
    await fill(index, "/b/other", 10_000, 300, 9);
    const queries = await embedder.embed(["retry timeout", "backup restore archive", "socket proxy cookie session", "queue worker pool lock", "item5 parser"]);
    const exact = queries.map((q) => index.nearest(q, 20, "/a/lib"));
    expect(queries.map((q) => search.nearest(q, 20, "/a/lib"))).toEqual(exact); // no copy yet: sqlite-vec itself
    await search.settled();
    const copy = search.cache.get("/a/lib", generation("/a/lib")!);
    expect(copy?.count).toBe(3000);
    expect(made).toEqual([{ partition: "/a/lib", vectors: 3000, bytes: copy!.bytes, ms: expect.any(Number) }]);
    queries.forEach((q, i) => {
      const answer = search.nearest(q, 20, "/a/lib");
      expect(answer).toHaveLength(20);
      // The same neighbours at the same distances (order may differ only among equal distances).
      answer.forEach((m, rank) => expect(near(m.distance, exact[i]![rank]!.distance)).toBe(true));
      expect(new Set(answer.filter((m) => m.distance < exact[i]![19]!.distance - 1e-5).map((m) => m.snippetId))).toEqual(
        new Set(exact[i]!.filter((m) => m.distance < exact[i]![19]!.distance - 1e-5).map((m) => m.snippetId)),
      );
    });
    // The small partition is scanned as stored and never copied.
    expect(search.nearest(queries[0]!, 5, "/b/other").map((m) => m.snippetId)).toEqual(index.nearest(queries[0]!, 5, "/b/other").map((m) => m.snippetId));
    await search.settled();
    expect(search.cache.get("/b/other", generation("/b/other")!)).toBeUndefined();
  });

  it("warms a partition before its first search, answering once the copy is in place; a retired partition's copy is dropped and never made again", async () => {
    const { index, search, made, generation } = setUp();
    await fill(index, "/a/lib#2", 1, 3000, 7);
    await fill(index, "/a/lib#1", 10_000, 3000, 9);
    // The new batch's partition: in place when warm answers, before any search asked for it.
    await search.warm("/a/lib#2");
    expect(search.cache.holds("/a/lib#2", generation("/a/lib#2")!)).toBe(true);
    expect(made.map((m) => m.partition)).toEqual(["/a/lib#2"]);
    // Warming what is already in place answers at once, and builds nothing again.
    await search.warm("/a/lib#2");
    expect(made).toHaveLength(1);
    // The replaced batch's partition, copied after a search, then retired at the swap: its copy goes at once, and a
    // search of it that raced the swap (it is still in vectors.db until the purge) does not build another.
    const [query] = await embedder.embed(["retry timeout"]);
    search.nearest(query!, 20, "/a/lib#1");
    await search.settled();
    expect(search.cache.holds("/a/lib#1", generation("/a/lib#1")!)).toBe(true);
    const bytes = search.cache.bytes;
    search.retire("/a/lib#1");
    expect(search.cache.holds("/a/lib#1", generation("/a/lib#1")!)).toBe(false);
    expect(search.cache.bytes).toBeLessThan(bytes);
    expect(search.nearest(query!, 20, "/a/lib#1")).toEqual(index.nearest(query!, 20, "/a/lib#1"));
    await search.settled();
    expect(search.cache.holds("/a/lib#1", generation("/a/lib#1")!)).toBe(false);
    expect(made.map((m) => m.partition)).toEqual(["/a/lib#2", "/a/lib#1"]);
  });

  it("never answers from a copy older than the partition: an upsert or a removal is seen at once", async () => {
    const { index, search, generation } = setUp();
    await fill(index, "/a/lib", 1, 2000, 11);
    const [query] = await embedder.embed(["a question nobody indexed about zebras and kites"]);
    search.nearest(query!, 10, "/a/lib");
    await search.settled();
    const before = generation("/a/lib")!;
    expect(search.cache.get("/a/lib", before)).toBeDefined();
    // The snippet farthest from the query now gets the query's own vector: a stale copy would never propose it.
    const farthest = index.nearest(query!, 2000, "/a/lib").at(-1)!.snippetId;
    index.upsert([{ snippetId: farthest, partition: "/a/lib", vector: query! }]);
    expect(generation("/a/lib")).toBeGreaterThan(before);
    expect(search.nearest(query!, 10, "/a/lib")[0]).toEqual({ snippetId: farthest, distance: expect.closeTo(0, 5) });
    await search.settled();
    expect(search.cache.get("/a/lib", generation("/a/lib")!)).toBeDefined(); // rebuilt for the new generation
    expect(search.nearest(query!, 10, "/a/lib")[0]!.snippetId).toBe(farthest);
    index.remove([farthest]);
    expect(search.nearest(query!, 10, "/a/lib").map((m) => m.snippetId)).not.toContain(farthest);
    // A recreated index (another embedder) gives every partition a generation never used before.
    const last = generation("/a/lib")!;
    index.recreate();
    expect(generation("/a/lib")).toBeGreaterThan(last);
  });

  it("keeps its copies within the memory budget, the least recently searched leaving first", async () => {
    const oneCopy = 2000 * (384 + 12);
    const { index, search, made, generation } = setUp({ budgetBytes: oneCopy + 1000, minVectors: 1000 });
    await fill(index, "/a/one", 1, 2000, 3);
    await fill(index, "/b/two", 5000, 2000, 5);
    await fill(index, "/c/big", 9000, 2500, 13);
    const [query] = await embedder.embed(["cache header token"]);
    search.nearest(query!, 10, "/a/one");
    await search.settled();
    search.nearest(query!, 10, "/b/two");
    await search.settled();
    expect(search.cache.get("/a/one", generation("/a/one")!)).toBeUndefined();
    expect(search.cache.get("/b/two", generation("/b/two")!)).toBeDefined();
    expect(search.cache.bytes).toBeLessThanOrEqual(oneCopy + 1000);
    // Larger than the whole budget: never copied, still answered exactly.
    expect(search.nearest(query!, 10, "/c/big")).toEqual(index.nearest(query!, 10, "/c/big"));
    await search.settled();
    expect(search.cache.get("/c/big", generation("/c/big")!)).toBeUndefined();
    expect(search.cache.get("/b/two", generation("/b/two")!)).toBeDefined();
    // The server is told, to tell the operator which setting to raise.
    expect(made.at(-1)).toMatchObject({ partition: "/c/big", overBudget: true });
    expect(made.at(-1)!.vectors).toBeLessThan(2500);
    // A copy that left is made again after its partition's next search (and the least recent one leaves).
    search.nearest(query!, 10, "/a/one");
    await search.settled();
    expect(search.cache.get("/a/one", generation("/a/one")!)).toBeDefined();
    expect(search.cache.get("/b/two", generation("/b/two")!)).toBeUndefined();
    // A partition written since its copy was made (a replaced batch being deleted) gives its memory back.
    index.remove(Array.from({ length: 2000 }, (_, i) => 1 + i));
    search.cache.sweep(generation);
    expect(search.cache.bytes).toBe(0);
  });

  it("keeps no copies of a file whose writer kept no generations (an older LDS)", async () => {
    const { file, index } = setUp();
    await fill(index, "/a/lib", 1, 1500, 17);
    new Database(file).exec("DROP TABLE vector_partitions").close();
    const search = createPartitionSearch(file, { budgetBytes: 64 * 2 ** 20, minVectors: 1000 });
    open.push(search);
    const [query] = await embedder.embed(["retry"]);
    expect(search.nearest(query!, 5, "/a/lib")).toEqual(index.nearest(query!, 5, "/a/lib"));
    await search.settled();
    expect(search.cache.bytes).toBe(0);
  });
});

describe("quantized partitions", () => {
  it("put the nearest vectors among twice as many candidates, for dense vectors as well as sparse", async () => {
    let seed = 1;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    const unit = (v: Float32Array) => {
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    };
    const vectors = Array.from({ length: 4000 }, () => unit(Float32Array.from({ length: 64 }, random)));
    // Blocks of 300 rows: thirteen full ones and a last one of 100.
    const builder = new QuantizedPartitionBuilder(64, 300);
    vectors.forEach((v, i) => builder.add(i + 1, v));
    const partition = builder.finish();
    expect(partition.count).toBe(4000);
    let found = 0;
    for (let q = 0; q < 20; q++) {
      const query = unit(Float32Array.from({ length: 64 }, (_, d) => (q % 2 && d % 3 ? 0 : random())));
      const dot = (v: Float32Array) => v.reduce((s, x, d) => s + x * query[d]!, 0);
      const best = vectors
        .map((v, i) => ({ id: i + 1, score: dot(v) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 10)
        .map((m) => m.id);
      const candidates = new Set(partition.candidates(query, 20));
      expect(candidates.size).toBe(20);
      found += best.filter((id) => candidates.has(id)).length;
    }
    expect(found).toBeGreaterThanOrEqual(198);
  });

  it("score every row in its own block, the last block partly filled", () => {
    // Seven rows in blocks of three: rows 1-3, 4-6 and 7. Row r points along the first dimension, r times as far.
    const builder = new QuantizedPartitionBuilder(4, 3);
    for (let r = 1; r <= 7; r++) builder.add(100 + r, Float32Array.from([0.05 * r, 0, 0, 0.01]));
    const partition = builder.finish();
    expect(partition.count).toBe(7);
    // Each block's columns are padded to 16 rows for the SIMD kernel: 3 blocks × 16 rows × 4 dimensions, the
    // scores (7 + 16 int32, in 16-byte steps) and the snippet ids.
    expect(partition.bytes).toBe(3 * 16 * 4 + 96 + 7 * 8);
    const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
    expect(partition.candidates(Float32Array.from([1, 0, 0, 0]), 1)).toEqual([107]);
    expect(sorted(partition.candidates(Float32Array.from([1, 0, 0, 0]), 3))).toEqual([105, 106, 107]);
    expect(sorted(partition.candidates(Float32Array.from([-1, 0, 0, 0]), 4))).toEqual([101, 102, 103, 104]);
    expect(sorted(partition.candidates(Float32Array.from([0.5, 0.5, 0.5, 0.5]), 9))).toEqual([101, 102, 103, 104, 105, 106, 107]);
  });
});

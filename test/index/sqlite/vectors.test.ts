import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../../../src/vectors/embedder.js";
import { loadVectorExtension, openVectorIndex, partitionLibrary, partitionOf } from "../../../src/index/sqlite/vector-index.js";
import { tempDir } from "../../helpers/temp.js";

describe("the hashing embedder and the vector index", () => {
  it("embeds deterministically into unit vectors, similar texts closer than unrelated ones", async () => {
    const embedder = createHashingEmbedder(256);
    const [a, a2, b, c] = await embedder.embed(["configure the http client timeout", "configure the http client timeout", "set the timeout of the http client", "bake bread with sourdough starter"]);
    expect(Array.from(a!)).toEqual(Array.from(a2!));
    const norm = Math.sqrt(a!.reduce((s, v) => s + v * v, 0));
    expect(norm).toBeCloseTo(1, 5);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!) + 0.2);
  });

  it("spreads features over all buckets with both signs (the hash's low bits are used)", async () => {
    const embedder = createHashingEmbedder(64);
    const words = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(" ");
    const [v] = await embedder.embed([words]);
    const used = Array.from(v!).filter((x) => x !== 0).length;
    expect(used).toBe(64);
    expect(Array.from(v!).some((x) => x < 0) && Array.from(v!).some((x) => x > 0)).toBe(true);
  });

  it("stores vectors by snippet id and finds the nearest within one partition, replacing on upsert", async () => {
    const embedder = createHashingEmbedder(64);
    const file = path.join(tempDir(), "vectors.db");
    const index = openVectorIndex(file, embedder);
    const texts = ["install the package", "configure logging", "write a plugin"];
    const vectors = await embedder.embed(texts);
    index.upsert(vectors.map((vector, i) => ({ snippetId: i + 10, partition: "/a/lib", vector })));
    index.upsert([{ snippetId: 99, partition: "/b/other", vector: vectors[1]! }]);
    expect(index.count()).toBe(4);
    const [query] = await embedder.embed(["how to configure logging"]);
    expect(index.nearest(query!, 1, "/a/lib")[0]!.snippetId).toBe(11);
    expect(index.nearest(query!, 5, "/b/other").map((m) => m.snippetId)).toEqual([99]);
    index.upsert([{ snippetId: 11, partition: "/a/lib", vector: vectors[0]! }]);
    expect(index.count()).toBe(4);
    index.remove([10, 11]);
    expect(index.count()).toBe(2);
    index.markComplete();
    index.close();
    const reopened = openVectorIndex(file, embedder);
    expect(reopened.stale).toBe(false);
    expect(reopened.count()).toBe(2);
    reopened.close();
  });

  it("names a partition's library (and version) as an operator knows it", () => {
    expect(partitionLibrary(partitionOf("/acme/widgets"))).toBe("/acme/widgets");
    expect(partitionLibrary(partitionOf("/acme/widgets", "", 7))).toBe("/acme/widgets");
    expect(partitionLibrary(partitionOf("/acme/widgets", "v2.1", 3))).toBe("/acme/widgets (version v2.1)");
  });

  it("reports itself stale for another embedder or the older layout, and is only recreated by a rebuild", async () => {
    const file = path.join(tempDir(), "vectors.db");
    const first = openVectorIndex(file, createHashingEmbedder(64));
    first.upsert([{ snippetId: 1, partition: "/a/b", vector: (await createHashingEmbedder(64).embed(["x"]))[0]! }]);
    first.markComplete();
    first.close();
    const other = openVectorIndex(file, createHashingEmbedder(128));
    expect(other.stale).toBe(true);
    // Opening changed nothing (another process may still use these vectors) …
    expect(other.count()).toBe(1);
    // … the rebuild starts from an empty table of the new kind.
    other.recreate();
    expect(other.count()).toBe(0);
    expect(other.stale).toBe(true);
    other.close();

    // Layout 1 (LDS 0.1/0.2): no partition key, only the dimensions recorded.
    const old = path.join(tempDir(), "vectors.db");
    const db = new Database(old);
    loadVectorExtension(db);
    db.exec(`CREATE TABLE vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO vector_meta VALUES ('dimensions', '64');
      CREATE VIRTUAL TABLE vec_snippets USING vec0(snippet_id INTEGER PRIMARY KEY, embedding float[64] distance_metric=cosine);`);
    db.close();
    const upgraded = openVectorIndex(old, createHashingEmbedder(64));
    expect(upgraded.stale).toBe(true);
    upgraded.recreate();
    upgraded.upsert([{ snippetId: 5, partition: "/a/b", vector: new Float32Array(64).fill(0.125) }]);
    expect(upgraded.count()).toBe(1);
    upgraded.close();
  });
});

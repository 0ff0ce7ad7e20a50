import path from "node:path";
import { describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../../src/vectors/embedder.js";
import { openVectorIndex } from "../../src/vectors/vector-index.js";
import { tempDir } from "../helpers/temp.js";

describe("the hashing embedder and the vector index", () => {
  it("embeds deterministically into unit vectors, similar texts closer than unrelated ones", async () => {
    const embedder = createHashingEmbedder(256);
    const [a, a2, b, c] = await embedder.embed([
      "configure the http client timeout",
      "configure the http client timeout",
      "set the timeout of the http client",
      "bake bread with sourdough starter",
    ]);
    expect(Array.from(a!)).toEqual(Array.from(a2!));
    const norm = Math.sqrt(a!.reduce((s, v) => s + v * v, 0));
    expect(norm).toBeCloseTo(1, 5);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!) + 0.2);
  });

  it("stores vectors by snippet id and finds the nearest, replacing on upsert", async () => {
    const embedder = createHashingEmbedder(64);
    const file = path.join(tempDir(), "vectors.db");
    const index = openVectorIndex(file, 64);
    const texts = ["install the package", "configure logging", "write a plugin"];
    const vectors = await embedder.embed(texts);
    index.upsert(vectors.map((vector, i) => ({ snippetId: i + 10, vector })));
    expect(index.count()).toBe(3);
    const [query] = await embedder.embed(["how to configure logging"]);
    expect(index.nearest(query!, 1)[0]!.snippetId).toBe(11);
    index.upsert([{ snippetId: 11, vector: vectors[0]! }]);
    expect(index.count()).toBe(3);
    index.remove([10, 11]);
    expect(index.count()).toBe(1);
    index.close();
    expect(() => openVectorIndex(file, 128)).toThrow(/64-dimension/);
  });
});

import { describe, expect, it } from "vitest";
import { writesOnlySearchIndex } from "../../../src/engine/postgres/writes-only-index.js";

// A command's ingestion on PostgreSQL opens no search files: its index takes no part, and never answers a ranking.
describe("the writes-only search index of a command's ingestion on PostgreSQL", () => {
  const index = writesOnlySearchIndex("lds ingest git", { id: "hashing-v2", dimensions: 256 });
  const batch = { libraryId: "/acme/tidewater", version: "", batch: 3 };

  it("takes the writes, preparations, retirements and probes of an ingestion without doing anything", async () => {
    await expect(index.add(batch, [{ id: 1, vector: new Float32Array(256) }])).resolves.toBeUndefined();
    await expect(index.remove([1])).resolves.toBeUndefined();
    await expect(index.upkeep()).resolves.toBeUndefined();
    await expect(index.prepare(batch, 10_000)).resolves.toBeUndefined();
    expect(() => index.retire(batch)).not.toThrow();
    await expect(index.probe(batch, 10_000, { words: ["retry"], vector: new Float32Array(256) })).resolves.toEqual([]);
    // Never stale: the command rebuilds nothing before it ingests.
    expect(index).toMatchObject({ stale: false, builtBy: "hashing-v2", dimensions: 256 });
  });

  it("refuses every ranking and rebuild with engine_unsupported naming the command", async () => {
    const refusal = { code: "engine_unsupported", message: expect.stringMatching(/^`lds ingest git` is not available on PostgreSQL yet: it needs the search index/) };
    await expect(index.rank(batch, ["retry"], 10)).rejects.toMatchObject(refusal);
    await expect(index.nearest(new Float32Array(256), 5, [batch])).rejects.toMatchObject(refusal);
    await expect(index.libraryRelevance(["retry"], ["/acme/tidewater"])).rejects.toMatchObject(refusal);
    await expect(index.beginRebuild({ vectors: true, words: true })).rejects.toMatchObject(refusal);
    expect(() => index.warm([], 1)).toThrow(expect.objectContaining(refusal));
  });
});

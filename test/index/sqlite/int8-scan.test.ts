import { describe, expect, it } from "vitest";
import { Int8Columns } from "../../../src/index/sqlite/int8-columns.js";
import { QuantizedPartitionBuilder } from "../../../src/index/sqlite/quantized-partition.js";

let seed = 7;
const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;

describe("the WebAssembly SIMD scan of quantized vector copies", () => {
  it("adds weighted int8 columns exactly as a scalar loop, for any number of columns, clamping weights to 16 bits", () => {
    const store = new Int8Columns();
    const rows = 48;
    const columnAt = Array.from({ length: 9 }, () => store.allocate(rows));
    const values = columnAt.map((at) => {
      const column = store.int8s(at, rows);
      for (let i = 0; i < rows; i++) column[i] = Math.round(random() * 127);
      return Array.from(column);
    });
    for (const count of [1, 3, 4, 5, 9]) {
      const weights = Array.from({ length: count }, (_, k) => (k === 1 ? 40_000 : k === 2 ? -40_000 : Math.round(random() * 1024)));
      const scoresAt = store.allocate(rows * 4);
      const start = Array.from({ length: rows }, (_, i) => i * 1000 - 7);
      store.int32s(scoresAt, rows).set(start);
      store.accumulate(scoresAt, columnAt.slice(0, count), weights, rows);
      const clamped = weights.map((w) => Math.max(-32_767, Math.min(32_767, w)));
      const expected = start.map((s, i) => clamped.reduce((sum, w, k) => sum + w * values[k]![i]!, s));
      expect(Array.from(store.int32s(scoresAt, rows)), `${count} columns`).toEqual(expected);
    }
  });

  it("picks the same best rows as the exact integer scores, across blocks whose rows are not multiples of 16", () => {
    // What the copy stores and how a query is weighted (quantized-partition.ts: SCALE 256, QUERY_SCALE 1024).
    const stored = (x: number) => Math.max(-127, Math.min(127, Math.round(x * 256)));
    const dims = 24;
    const vectors = Array.from({ length: 5000 }, () => Float32Array.from({ length: dims }, () => random() * 0.4));
    for (const blockRows of [300, 4096]) {
      const builder = new QuantizedPartitionBuilder(dims, blockRows);
      vectors.forEach((v, i) => builder.add(i + 1, v));
      const partition = builder.finish();
      for (let q = 0; q < 12; q++) {
        // Dense, and sparse with 1 to 7 dimensions set (fewer than four, and not a multiple of four).
        const query = Float32Array.from({ length: dims }, (_, d) => (q < 4 || d % 12 < q - 4 ? random() : 0));
        const score = (v: Float32Array) => v.reduce((sum, x, d) => sum + stored(x) * Math.round(query[d]! * 1024), 0);
        const exact = vectors.map((v, i) => ({ id: i + 1, score: score(v) })).sort((a, b) => b.score - a.score);
        const picked = partition.candidates(query, 25);
        const scoreOf = new Map(exact.map((e) => [e.id, e.score]));
        // Ties may pick either row: the scores picked must be the 25 best scores.
        expect(
          picked.map((id) => scoreOf.get(id)!).sort((a, b) => b - a),
          `blocks of ${blockRows}, query ${q}`,
        ).toEqual(exact.slice(0, 25).map((e) => e.score));
      }
    }
  });
});

import { describe, expect, it } from "vitest";
import { fuse } from "../../src/search/rank-snippets.js";

describe("score fusion", () => {
  it("keeps a clear BM25 winner first when the vectors are unsure, and lets the vectors decide between close ones", () => {
    const bm25 = [
      { id: 1, score: 10 },
      { id: 2, score: 4 },
      { id: 3, score: 3.9 },
    ];
    const vectors = [
      { id: 3, score: 0.62 },
      { id: 2, score: 0.6 },
      { id: 1, score: 0.58 },
    ];
    expect(
      fuse([
        { hits: bm25, weight: 1 },
        { hits: vectors, weight: 0.7 },
      ]),
    ).toEqual([1, 3, 2]);
  });

  it("adds what only one ranking found, and survives an empty list or scores without evidence", () => {
    expect(
      fuse([
        { hits: [{ id: 5, score: 2 }], weight: 1 },
        { hits: [], weight: 0.7 },
      ]),
    ).toEqual([5]);
    expect(
      fuse([
        { hits: [], weight: 1 },
        {
          hits: [
            { id: 7, score: 0.5 },
            { id: 8, score: 0.25 },
          ],
          weight: 0.7,
        },
      ]),
    ).toEqual([7, 8]);
    // Non-positive scores give no evidence (and no division by zero): the order of the lists is kept.
    expect(
      fuse([
        {
          hits: [
            { id: 1, score: 0 },
            { id: 2, score: -1 },
          ],
          weight: 1,
        },
        { hits: [], weight: 0.7 },
      ]),
    ).toEqual([1, 2]);
  });
});

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// The external quality benchmark's metrics and split (bench/quality/), checked on cases computed by hand.
import { hitAt, mean, ndcgAt, pagesOf, recallAt, reciprocalRank, scoreQuestion } from "../../bench/quality/metrics.js";
import { splitHalves } from "../../bench/quality/split.js";
import { ROOT } from "../helpers/cli.js";

describe("quality benchmark metrics", () => {
  it("maps snippets to pages by their source path up to '#', keeping each page's first place", () => {
    expect(pagesOf(["a.md#x", "b.md#y", "a.md#z", "c.md", "b.md"])).toEqual(["a.md", "b.md", "c.md"]);
  });

  it("takes the reciprocal rank of the first page graded 3, and 0 when there is none", () => {
    expect(reciprocalRank(["x", "y", "z"], { z: 3, y: 2 })).toBeCloseTo(1 / 3, 12);
    expect(reciprocalRank(["x", "z", "w"], { w: 3, z: 3 })).toBe(0.5);
    // A page graded 2 helps but is not the right page.
    expect(reciprocalRank(["y", "x"], { y: 2 })).toBe(0);
  });

  it("counts a hit at k only for a page graded 3 within the first k pages", () => {
    const pages = ["b", "c", "d", "e", "f", "a"];
    const qrels = { a: 3, b: 2 };
    expect(hitAt(pages, qrels, 1)).toBe(0);
    expect(hitAt(pages, qrels, 5)).toBe(0);
    expect(hitAt(pages, qrels, 6)).toBe(1);
    expect(hitAt(["a"], qrels, 1)).toBe(1);
  });

  it("computes recall at 5 over the pages graded 2 or 3", () => {
    // Wanted: a, b, d (c is only related). In the first five: a. d comes sixth.
    expect(recallAt(["a", "c", "e", "f", "g", "d"], { a: 3, b: 2, c: 1, d: 2 }, 5)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(["d", "b", "a"], { a: 3, b: 2, c: 1, d: 2 }, 5)).toBe(1);
  });

  it("computes nDCG at 5 with gain 2^g - 1, a log2 discount and the ideal order of the qrels", () => {
    const qrels = { a: 3, b: 2, c: 1 };
    // DCG of [b, x, a]: 3/log2(2) + 0/log2(3) + 7/log2(4) = 3 + 3.5 = 6.5.
    // Ideal [a, b, c]: 7/1 + 3/log2(3) + 1/log2(4) = 7 + 1.89279 + 0.5 = 9.39279.
    expect(ndcgAt(["b", "x", "a"], qrels, 5)).toBeCloseTo(0.69202, 5);
    expect(ndcgAt(["a", "b", "c", "x"], qrels, 5)).toBeCloseTo(1, 12);
    expect(ndcgAt(["x", "y"], qrels, 5)).toBe(0);
    // Only the first k pages count: a page graded 3 in sixth place adds nothing.
    expect(ndcgAt(["p", "q", "r", "s", "t", "a"], qrels, 5)).toBe(0);
  });

  it("scores a question with every metric and averages groups of questions", () => {
    const first = scoreQuestion(["b", "a"], { a: 3, b: 2 });
    expect(first).toEqual({ mrr: 0.5, hit1: 0, hit5: 1, recall5: 1, ndcg5: expect.any(Number) });
    // DCG 3 + 7/log2(3); ideal 7 + 3/log2(3).
    expect(first.ndcg5).toBeCloseTo((3 + 7 / Math.log2(3)) / (7 + 3 / Math.log2(3)), 12);
    const second = scoreQuestion(["a"], { a: 3 });
    expect(mean([first, second])).toMatchObject({ n: 2, mrr: 0.75, hit1: 0.5, hit5: 1, recall5: 1 });
  });
});

describe("quality benchmark questions", () => {
  const { questions } = JSON.parse(fs.readFileSync(path.join(ROOT, "bench/quality/questions.json"), "utf8")) as {
    questions: Array<{ id: string; project: string; kind: string; question: string; qrels: Record<string, number> }>;
  };

  it("holds at least 60 questions, 12 per project, of the four kinds, each with a right page and grades 1 to 3", () => {
    expect(questions.length).toBeGreaterThanOrEqual(60);
    expect(new Set(questions.map((q) => q.id)).size).toBe(questions.length);
    const perProject = new Map<string, number>();
    for (const q of questions) perProject.set(q.project, (perProject.get(q.project) ?? 0) + 1);
    expect(perProject.size).toBeGreaterThanOrEqual(5);
    for (const count of perProject.values()) expect(count).toBeGreaterThanOrEqual(12);
    for (const q of questions) {
      expect(["api", "conceptual", "comparison", "troubleshooting"]).toContain(q.kind);
      expect(Object.values(q.qrels)).toContain(3);
      for (const grade of Object.values(q.qrels)) expect([1, 2, 3]).toContain(grade);
    }
  });

  it("splits them into halves of equal size, stratified by project and kind, whatever the order they are listed in", () => {
    const half = splitHalves(questions);
    const reversed = splitHalves([...questions].reverse());
    expect([...half.entries()].sort()).toEqual([...reversed.entries()].sort());
    const count = (filter: (q: (typeof questions)[number]) => boolean, h: string) => questions.filter((q) => filter(q) && half.get(q.id) === h).length;
    expect(Math.abs(count(() => true, "tuning") - count(() => true, "heldOut"))).toBeLessThanOrEqual(1);
    for (const q of questions) {
      const group = (x: (typeof questions)[number]) => x.project === q.project && x.kind === q.kind;
      expect(Math.abs(count(group, "tuning") - count(group, "heldOut"))).toBeLessThanOrEqual(1);
    }
  });
});

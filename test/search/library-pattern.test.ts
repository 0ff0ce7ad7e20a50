import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { compileLibraryPattern, libraryPatternSet, matchLibraryPattern, type StepMeter } from "../../src/search/library-pattern.js";
import { libraryPatternProblem } from "../../src/search/library-pattern-rules.js";

/**
 * The access-policy matcher (issue 39, item 2) against two references, on random library ids and patterns from a
 * seeded generator (the seed is printed; LDS_PATTERN_SEED=<seed> replays a failure):
 * - a tiny recursive matcher that is obviously the documented grammar (exponential: short inputs only);
 * - picomatch with {dot: true}, which matched policies until 0.7.10: saved patterns must keep their meaning.
 * Work is measured in the matcher's own steps, not in wall time.
 */
const SEED = Number(process.env.LDS_PATTERN_SEED ?? Date.now() % 2 ** 31);
console.log(`library-pattern property tests: seed ${SEED} (LDS_PATTERN_SEED=${SEED} replays it)`);

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const random = prng(SEED);
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const pick = (chars: string) => chars[int(0, chars.length - 1)]!;
const times = <T>(n: number, make: () => T) => Array.from({ length: n }, make);

/** A library id as LDS makes them: 2 or more non-empty segments, none of them `.` or `..`. */
function randomId(maxSegments = 5, maxLength = 6): string {
  const segment = () => {
    let s: string;
    do s = times(int(1, maxLength), () => pick("aaab.-~:")).join("");
    while (s === "." || s === "..");
    return s;
  };
  return "/" + times(int(2, maxSegments), segment).join("/");
}

/** A pattern of the documented grammar's alphabet (some are refused: the tests keep those out or in as they need). */
function randomPattern(): string {
  const segment = () => (random() < 0.25 ? "**" : times(int(1, 5), () => pick("aab**.~")).join(""));
  return "/" + times(int(1, 5), segment).join("/");
}

/**
 * A pattern 0.7.10 accepted (/^\/[A-Za-z0-9._:*\/-]{1,255}$/, no "/.."): empty segments, runs of stars and all.
 * Except one picomatch bug: after a run of three or more stars it stops escaping "." (`/***a.b` matches `/xa/b`);
 * we read "." literally there (a test below shows both).
 */
function randomOldPattern(): string {
  for (;;) {
    const p = "/" + times(int(1, 14), () => pick("ab*/*/.:-")).join("");
    if (/^\/[A-Za-z0-9._:*/-]{1,255}$/.test(p) && !p.includes("/..") && !(p.includes("***") && p.includes("."))) return p;
  }
}

/** The documented grammar, written for clarity: `**` any number of whole segments, `*` any run within one. */
function reference(pattern: string, id: string): boolean {
  const segment = (p: string, t: string): boolean =>
    p === "" ? t === "" : p[0] === "*" ? segment(p.slice(1), t) || (t !== "" && segment(p, t.slice(1))) : t !== "" && t[0] === p[0] && segment(p.slice(1), t.slice(1));
  const segments = (ps: string[], ts: string[]): boolean =>
    ps.length === 0
      ? ts.length === 0
      : ps[0] === "**"
        ? segments(ps.slice(1), ts) || (ts.length > 0 && segments(ps, ts.slice(1)))
        : ts.length > 0 && segment(ps[0]!, ts[0]!) && segments(ps.slice(1), ts.slice(1));
  return segments(pattern.slice(1).split("/"), id.slice(1).split("/"));
}

const compiledByPicomatch = new Map<string, (id: string) => boolean>();
const picomatched = (pattern: string, id: string) => {
  if (!compiledByPicomatch.has(pattern)) compiledByPicomatch.set(pattern, picomatch(pattern, { dot: true }));
  return compiledByPicomatch.get(pattern)!(id);
};
const matches = (pattern: string, id: string) => matchLibraryPattern(compileLibraryPattern(pattern), id);
const steps = (pattern: string, id: string) => {
  const meter: StepMeter = { steps: 0 };
  const matched = matchLibraryPattern(compileLibraryPattern(pattern), id, meter);
  return { matched, steps: meter.steps };
};
const segmentCount = (id: string) => id.split("/").length - 1;
const hasGlobstar = (pattern: string) => pattern.split("/").includes("**");

describe("library-id patterns of access policies (issue 39)", () => {
  it("agree with the documented grammar and with 0.7.10's picomatch on every pattern a policy accepts", () => {
    let accepted = 0;
    let matched = 0;
    for (let i = 0; i < 6000; i++) {
      const pattern = randomPattern();
      if (libraryPatternProblem(pattern) !== null) continue;
      accepted++;
      for (const id of times(4, () => randomId())) {
        const expected = reference(pattern, id);
        expect({ pattern, id, matched: matches(pattern, id) }).toEqual({ pattern, id, matched: expected });
        expect({ pattern, id, picomatch: picomatched(pattern, id) }).toEqual({ pattern, id, picomatch: expected });
        if (expected) matched++;
      }
    }
    // The generator must exercise both answers, not only refusals or only misses.
    expect(accepted).toBeGreaterThan(1500);
    expect(matched).toBeGreaterThan(500);
  });

  it("give every pattern saved under 0.7.10's looser grammar the meaning picomatch gave it", () => {
    for (let i = 0; i < 6000; i++) {
      const pattern = randomOldPattern();
      for (const id of times(4, () => randomId(4, 4))) {
        expect({ pattern, id, matched: matches(pattern, id) }).toEqual({ pattern, id, matched: picomatched(pattern, id) });
      }
    }
    // The forms refused now, each still read as picomatch read it.
    const saved: Array<[string, string, boolean]> = [
      ["/**/a/b", "/a/b", false],
      ["/**/a/b", "/x/a/b", true],
      ["/a/*/**", "/a/b", false],
      ["/a/*/**", "/a/b/c", true],
      ["/a/***", "/a/b", true],
      ["/a/b**", "/a/bc", true],
      ["/a//b", "/a/b", false],
      ["/a/b/", "/a/b", false],
    ];
    for (const [pattern, id, expected] of saved) {
      expect(libraryPatternProblem(pattern)).not.toBeNull();
      expect({ pattern, id, matched: matches(pattern, id) }).toEqual({ pattern, id, matched: expected });
      expect(picomatched(pattern, id)).toBe(expected);
    }
    // picomatch's one bug on this alphabet: a "." after a run of three stars matched any character, "/" included.
    expect(picomatched("/***a.b", "/xa/b")).toBe(true);
    expect(matches("/***a.b", "/xa/b")).toBe(false);
    expect(matches("/***a.b", "/xa.b")).toBe(true);
  });

  it("match a list of patterns as any one of them, whatever the mix of literal, owner-scoped and open patterns", () => {
    for (let i = 0; i < 1500; i++) {
      const patterns = times(int(0, 6), () => (random() < 0.3 ? randomId() : randomOldPattern()));
      const set = libraryPatternSet(patterns);
      for (const id of times(4, () => randomId())) {
        expect({ patterns, id, matched: set(id) }).toEqual({ patterns, id, matched: patterns.some((p) => picomatched(p, id)) });
      }
    }
  });

  it("take steps linear in the id and pattern without **, and at most that times the id's segments with it", () => {
    const bound = (pattern: string, id: string) => 4 * (hasGlobstar(pattern) ? segmentCount(id) + 1 : 1) * (id.length + pattern.length + 1);
    const check = (pattern: string, id: string) => {
      const { steps: taken } = steps(pattern, id);
      expect({ pattern, id, taken, withinBound: taken <= bound(pattern, id) }).toMatchObject({ withinBound: true });
      // The brief's bound, c·|pattern|·|id|, follows.
      expect(taken).toBeLessThanOrEqual(4 * (pattern.length + 1) * (id.length + 1));
      return taken;
    };
    for (let i = 0; i < 3000; i++) check(randomOldPattern(), randomId(9, 40));
    // The issue's pattern, and longer ones of its kind, against ever longer segments: linear, not exponential.
    const issue = "/" + "*a".repeat(16) + "*c";
    let previous = 0;
    for (const length of [30, 60, 120, 240]) {
      const taken = check(issue, "/" + "a".repeat(length) + "/x");
      check(issue + "/*", "/" + "a".repeat(length) + "/x");
      check("/x/" + "*a".repeat(16) + "*c", "/x/" + "a".repeat(length));
      if (previous) expect(taken).toBeLessThanOrEqual(2.2 * previous);
      previous = taken;
    }
    // ** runs placed at every segment of a long id, each run scanning whole segments before it fails.
    const long = "/" + times(9, () => "a".repeat(27)).join("/");
    for (const pattern of ["/**/*a*a*a*a*a*a*c/**", "/**/*a*a*/*a*a*c/**/*a*c/**", "/**/*a*/**/*a*/**/*a*/**/*c", "/*a*/**/*a*a*a*a*/*a*/*a*a*c/**/*a*"]) {
      check(pattern, long);
    }
  });

  it("refuse forms outside the grammar, with the reason, and accept the documented examples", () => {
    for (const ok of [
      "/acme/*",
      "/acme/legacy-*",
      "/~team-3/**",
      "/~team-3/127.0.0.1:8080/*",
      "/~team-2/wiki/~jdoe",
      "/vercel/next.js",
      "/**",
      "/**/docs",
      "/a/**/b",
      "/*/**/a/b",
      "/a/*/**/*",
      "/" + "*a".repeat(16) + "*c",
    ]) {
      expect({ ok, problem: libraryPatternProblem(ok) }).toEqual({ ok, problem: null });
    }
    const refused: Array<[string, RegExp]> = [
      ["acme/*", /does not start with \//],
      ["/acme/?", /character other than/],
      ["/acme/[ab]", /character other than/],
      ["/acme/{a,b}", /character other than/],
      ["/a" + "/b".repeat(130), /longer than 256 characters/],
      ["/" + "*a".repeat(33), /more than 32 "\*"/],
      ["/acme//x", /empty segment/],
      ["/acme/", /empty segment/],
      ["/acme/../x", /\. or \.\. segment/],
      ["/acme/x**", /"\*\*" inside a segment/],
      ["/acme/***", /"\*\*" inside a segment/],
      ["/**/a/b", /write "\/\*\/\*\*\/a\/b" for that, and add "\/a\/b" for none/],
      ["/acme/x*/**", /write "\/acme\/x\*\/\*\*\/\*" for that, and add "\/acme\/x\*" for none/],
    ];
    for (const [pattern, reason] of refused) expect(libraryPatternProblem(pattern) ?? "accepted").toMatch(reason);
  });
});

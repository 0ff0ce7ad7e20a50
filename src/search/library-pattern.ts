/**
 * Library-id patterns of the access policies (`/acme/*`, `/~team-3/**`), matched without backtracking.
 *
 * Grammar: `/` then segments separated by `/`. A segment is `**` (any number of whole segments, none included) or
 * literal characters and `*` (any run of characters within the segment, none included). There is no `?`, no
 * character class, no brace, no negation: those characters are refused (library-pattern-rules.ts).
 *
 * Cost, by construction (no regular expression, no recursion), counted in StepMeter steps:
 * - One segment against one id segment t: the texts between the `*`s are found leftmost, first to last, each with
 *   Knuth-Morris-Pratt over the part of t not yet used: at most 3·|t| + (number of `*`) + 1 steps.
 * - A pattern without `**`: its segments against the id's, in order: at most 4·(|id| + |pattern| + 1), linear.
 * - With `**`: the runs of segments between `**`s are placed leftmost, first to last, a run tried at each id
 *   segment in turn; each (id segment, pattern segment) pair is compared at most once, so at most
 *   4·(S + 1)·(|id| + |pattern| + 1) steps, S the id's segment count: O(|id|·|pattern|) in general, and a small
 *   multiple of |id| + |pattern| for library ids (under ten segments).
 * Leftmost placement is enough because `*` and `**` absorb whatever lies between two placed runs.
 */

/** Steps taken by the matcher (character comparisons and placements), so tests can bound work without clocks. */
export interface StepMeter {
  steps: number;
}

interface Piece {
  text: string;
  /** Knuth-Morris-Pratt failure function: the longest proper border of text[0..i]. */
  border: Int32Array;
}

/** One pattern segment other than `**`: its text before the first `*`, between the `*`s, after the last. */
interface SegmentMatcher {
  literal: boolean;
  head: string;
  middle: Piece[];
  tail: string;
  minLength: number;
}

export interface CompiledLibraryPattern {
  source: string;
  /** Runs of segments separated by `**`: one run when there is no `**`. */
  runs: SegmentMatcher[][];
  minSegments: number;
  /** The first segment when it is literal (lets a set of patterns skip ids of other owners), else null. */
  firstLiteral: string | null;
  /** Never matches a library id (an empty segment: ids have none). */
  never: boolean;
}

export const GLOBSTAR = "**";
const ANY_SEGMENT = "*";
const NO_METER: StepMeter = { steps: 0 };

/**
 * A pattern compiled for matching. Never throws: patterns saved by 0.7.10 and earlier were checked against a looser
 * grammar, and keep the meaning picomatch ({dot: true}) gave them on library ids (ids have 2 or more non-empty
 * segments, none of them `.` or `..`): a run of `*` within a segment is one `*`; consecutive `**` are one; a
 * leading `/**` followed by more segments, or a last `/**` right after a segment ending in `*`, stood for one
 * segment or more; an empty segment matched no id. library-pattern-rules.ts refuses those forms in new policies.
 * One deliberate difference: after a run of three `*`, picomatch stopped escaping `.` (any character, `/` included);
 * here `.` is always a `.`.
 */
export function compileLibraryPattern(source: string): CompiledLibraryPattern {
  const segments = source.startsWith("/") ? collapseGlobstars(source.slice(1).split("/")) : [""];
  const never = segments.includes("");
  const expanded: string[] = [];
  segments.forEach((segment, i) => {
    const atLeastOne = segment === GLOBSTAR && ((i === 0 && segments.length > 1) || (i > 0 && i === segments.length - 1 && segments[i - 1]!.endsWith("*")));
    if (atLeastOne) expanded.push(ANY_SEGMENT);
    expanded.push(segment);
  });
  const runs: SegmentMatcher[][] = [[]];
  for (const segment of expanded) {
    if (segment === GLOBSTAR) runs.push([]);
    else runs[runs.length - 1]!.push(segmentMatcher(segment));
  }
  const first = runs[0]![0];
  return {
    source,
    runs,
    minSegments: runs.reduce((n, run) => n + run.length, 0),
    firstLiteral: first?.literal ? first.head : null,
    never,
  };
}

/** Whether a library id matches a compiled pattern. */
export function matchLibraryPattern(pattern: CompiledLibraryPattern, id: string, meter: StepMeter = NO_METER): boolean {
  if (pattern.never || !id.startsWith("/")) return false;
  return matchSegments(pattern, id.slice(1).split("/"), meter);
}

/** Whether id segments (the id without its leading `/`, split on `/`) match. */
export function matchSegments(pattern: CompiledLibraryPattern, segments: string[], meter: StepMeter = NO_METER): boolean {
  const { runs } = pattern;
  meter.steps++;
  if (pattern.never || segments.length < pattern.minSegments) return false;
  if (runs.length === 1) return segments.length === runs[0]!.length && runAt(runs[0]!, segments, 0, meter);
  const last = runs[runs.length - 1]!;
  if (!runAt(runs[0]!, segments, 0, meter) || !runAt(last, segments, segments.length - last.length, meter)) return false;
  let from = runs[0]!.length;
  const end = segments.length - last.length;
  for (let r = 1; r < runs.length - 1; r++) {
    const run = runs[r]!;
    let at = from;
    while (at + run.length <= end && !runAt(run, segments, at, meter)) at++;
    if (at + run.length > end) return false;
    from = at + run.length;
  }
  return true;
}

function runAt(run: SegmentMatcher[], segments: string[], at: number, meter: StepMeter): boolean {
  for (let i = 0; i < run.length; i++) if (!matchSegment(run[i]!, segments[at + i]!, meter)) return false;
  return true;
}

function matchSegment(m: SegmentMatcher, text: string, meter: StepMeter): boolean {
  meter.steps++;
  if (m.literal) {
    meter.steps += Math.min(text.length, m.head.length);
    return text === m.head;
  }
  if (text.length < m.minLength) return false;
  meter.steps += m.head.length + m.tail.length;
  if (!text.startsWith(m.head) || !text.endsWith(m.tail)) return false;
  let from = m.head.length;
  const end = text.length - m.tail.length;
  for (const piece of m.middle) {
    const at = findPiece(piece, text, from, end, meter);
    if (at < 0) return false;
    from = at + piece.text.length;
  }
  return true;
}

/** The first index >= from where piece lies wholly before end, or -1 (Knuth-Morris-Pratt: at most 2·(end-from) steps). */
function findPiece(piece: Piece, text: string, from: number, end: number, meter: StepMeter): number {
  const { text: p, border } = piece;
  let k = 0;
  meter.steps++;
  for (let i = from; i < end; i++) {
    meter.steps++;
    while (k > 0 && text[i] !== p[k]) {
      k = border[k - 1]!;
      meter.steps++;
    }
    if (text[i] === p[k]) k++;
    if (k === p.length) return i - p.length + 1;
  }
  return -1;
}

function segmentMatcher(segment: string): SegmentMatcher {
  const parts = segment.split(/\*+/);
  if (parts.length === 1) return { literal: true, head: segment, middle: [], tail: "", minLength: segment.length };
  const middle = parts
    .slice(1, -1)
    .filter((p) => p !== "")
    .map(piece);
  return { literal: false, head: parts[0]!, middle, tail: parts[parts.length - 1]!, minLength: parts.join("").length };
}

function piece(text: string): Piece {
  const border = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text[i] !== text[k]) k = border[k - 1]!;
    if (text[i] === text[k]) k++;
    border[i] = k;
  }
  return { text, border };
}

/**
 * A matcher of library ids against a list of patterns (a policy's allow or deny list), compiled once per request.
 * Star-free patterns are a set lookup; patterns whose first segment is literal are tried only on ids of that first
 * segment; the id is split once. Work per id: at most the sum of the bounds above over the remaining patterns.
 */
export function libraryPatternSet(patterns: readonly string[]): (id: string) => boolean {
  const literal = new Set<string>();
  const byFirst = new Map<string, CompiledLibraryPattern[]>();
  const anyFirst: CompiledLibraryPattern[] = [];
  for (const source of patterns) {
    if (!source.includes("*")) {
      literal.add(source);
      continue;
    }
    const compiled = compileLibraryPattern(source);
    if (compiled.never) continue;
    if (compiled.firstLiteral === null) anyFirst.push(compiled);
    else {
      const same = byFirst.get(compiled.firstLiteral);
      if (same) same.push(compiled);
      else byFirst.set(compiled.firstLiteral, [compiled]);
    }
  }
  return (id) => {
    if (literal.has(id)) return true;
    if (!id.startsWith("/") || (byFirst.size === 0 && anyFirst.length === 0)) return false;
    const segments = id.slice(1).split("/");
    const candidates = byFirst.get(segments[0]!);
    return (candidates?.some((p) => matchSegments(p, segments)) ?? false) || anyFirst.some((p) => matchSegments(p, segments));
  };
}

/** Segments with each run of consecutive `**` made one (they mean the same). */
export function collapseGlobstars(segments: string[]): string[] {
  return segments.filter((s, i) => !(s === GLOBSTAR && segments[i - 1] === GLOBSTAR));
}

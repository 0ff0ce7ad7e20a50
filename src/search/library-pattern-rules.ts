import { collapseGlobstars, GLOBSTAR } from "./library-pattern.js";

/** Bounds of one pattern (the whole policy's are in access-policy.ts): they bound the matcher's work per id. */
export const MAX_PATTERN_LENGTH = 256;
export const MAX_STARS_PER_PATTERN = 32;

/**
 * Why a pattern may not be saved in a policy, as the end of a sentence ("... is not a library id pattern: it <why>"),
 * or null. Refused besides bad characters and the bounds: forms that never match an id (empty, `.` or `..`
 * segments), `**` inside a segment, and the two forms whose meaning under 0.7.10's picomatch was not "any number of
 * segments" (see compileLibraryPattern), so that every pattern accepted now means what it meant then.
 */
export function libraryPatternProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  if (!pattern.startsWith("/")) return "does not start with /";
  if (!/^[A-Za-z0-9._:~*/-]+$/.test(pattern)) return "has a character other than letters, digits, . _ - : ~ / and * (there is no ?, [...] or {...})";
  if (starCount(pattern) > MAX_STARS_PER_PATTERN) return `has more than ${MAX_STARS_PER_PATTERN} "*"`;
  const segments = pattern.slice(1).split("/");
  if (segments.includes("")) return "has an empty segment (// or a / at the end)";
  if (segments.some((s) => s === "." || s === "..")) return "has a . or .. segment";
  if (segments.some((s) => s.includes(GLOBSTAR) && s !== GLOBSTAR)) return 'has "**" inside a segment: "**" stands alone between slashes, "*" matches within a segment';
  const collapsed = collapseGlobstars(segments);
  if (collapsed[0] === GLOBSTAR && collapsed.length > 2) {
    return `starts with "/**/" before more than one segment, which matched one segment or more until 0.7.10: write "/*/**/${collapsed.slice(1).join("/")}" for that, and add "/${collapsed.slice(1).join("/")}" for none`;
  }
  const last = collapsed.length - 1;
  if (last > 0 && collapsed[last] === GLOBSTAR && collapsed[last - 1]!.endsWith("*")) {
    const before = "/" + collapsed.slice(0, last).join("/");
    return `ends with "/**" right after a "*", which matched one segment or more until 0.7.10: write "${before}/**/*" for that, and add "${before}" for none`;
  }
  return null;
}

/** The number of `*` in a pattern (`**` counts two). */
export function starCount(pattern: string): number {
  let n = 0;
  for (const c of pattern) if (c === "*") n++;
  return n;
}

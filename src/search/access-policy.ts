import { LdsError } from "../errors.js";
import type { AccessPolicy, SourceType } from "../store/records.js";
import { libraryPatternSet } from "./library-pattern.js";
import { libraryPatternProblem, starCount } from "./library-pattern-rules.js";

export type { AccessPolicy, SourceType };

/**
 * A team's access policy (GET/PATCH /v2/policies, `lds teams restrict`): which source types and which libraries its
 * keys may use, enforced by search, context, MCP and refresh. Library patterns are globs over library ids:
 * `*` within one segment, `**` across segments (`/acme/*`, `/~team-3/**`, `/vercel/next.js`), matched without
 * backtracking (library-pattern.ts: linear per segment, bounded by pattern x id overall).
 * - `sourceTypes`: the kinds of source allowed ("git", "wiki").
 * - `libraries.allow`: null allows every library; a list allows only matching ones (an empty list: none).
 * - `libraries.deny`: matching libraries are refused even when allowed.
 */
export const SOURCE_TYPES: readonly SourceType[] = ["git", "wiki"];

export const OPEN_POLICY: AccessPolicy = { sourceTypes: [...SOURCE_TYPES], libraries: { allow: null, deny: [] } };

const MAX_PATTERNS = 500;
/** Bounds the work of one request: each `*` can cost a scan of a library id segment, per library checked. */
const MAX_STARS_PER_POLICY = 1000;

/** Whether a policy narrows anything (search results then carry searchFilterApplied: true). */
export function isRestrictive(policy: AccessPolicy): boolean {
  return policy.sourceTypes.length < SOURCE_TYPES.length || policy.libraries.allow !== null || policy.libraries.deny.length > 0;
}

/** Compiled lists by their patterns: a team's policy is compiled once, not at every request that reads it. */
const compiledLists = new Map<string, (id: string) => boolean>();
/** Policies differ per team and change rarely; beyond this many distinct lists the oldest is compiled again. */
const MAX_COMPILED_LISTS = 512;

/**
 * A matcher of libraries: every reader of a policy (search, context, MCP, refresh, submissions, metrics, the policy's
 * own library count) goes through it. Each list is compiled once per distinct content and kept (a policy saved by
 * 0.7.10 may hold up to 1,000 patterns outside today's limits, whose compilation would otherwise cost every request).
 */
export function policyMatcher(policy: AccessPolicy): (library: { id: string; source: string }) => boolean {
  let compiled: { allowed: (id: string) => boolean; denied: (id: string) => boolean } | undefined;
  return (library) => {
    if (!(policy.sourceTypes as string[]).includes(library.source)) return false;
    compiled ??= {
      allowed: policy.libraries.allow === null ? () => true : compiledList(policy.libraries.allow),
      denied: compiledList(policy.libraries.deny),
    };
    return compiled.allowed(library.id) && !compiled.denied(library.id);
  };
}

function compiledList(patterns: readonly string[]): (id: string) => boolean {
  const key = JSON.stringify(patterns);
  let list = compiledLists.get(key);
  if (list) {
    // Most recently used last, so the eviction below drops the least recently used.
    compiledLists.delete(key);
  } else {
    list = libraryPatternSet(patterns);
    if (compiledLists.size >= MAX_COMPILED_LISTS) compiledLists.delete(compiledLists.keys().next().value!);
  }
  compiledLists.set(key, list);
  return list;
}

/** A PATCH body applied to a policy: the fields it names replace the current ones; anything malformed is a 400. */
export function patchPolicy(current: AccessPolicy, body: unknown): AccessPolicy {
  if (!isObject(body)) throw invalid("the body must be a JSON object");
  unknownKeys(body, ["sourceTypes", "libraries"], "");
  const next: AccessPolicy = { sourceTypes: [...current.sourceTypes], libraries: { allow: current.libraries.allow, deny: [...current.libraries.deny] } };
  if (body.sourceTypes !== undefined) {
    if (!Array.isArray(body.sourceTypes) || body.sourceTypes.some((t) => !SOURCE_TYPES.includes(t as SourceType))) {
      throw invalid(`sourceTypes must be a list of ${SOURCE_TYPES.map((t) => `"${t}"`).join(" and ")}`);
    }
    next.sourceTypes = SOURCE_TYPES.filter((t) => (body.sourceTypes as string[]).includes(t));
  }
  if (body.libraries !== undefined) {
    if (!isObject(body.libraries)) throw invalid("libraries must be an object with allow and/or deny");
    unknownKeys(body.libraries, ["allow", "deny"], "libraries.");
    if (body.libraries.allow !== undefined) next.libraries.allow = body.libraries.allow === null ? null : patterns(body.libraries.allow, "libraries.allow");
    if (body.libraries.deny !== undefined) next.libraries.deny = patterns(body.libraries.deny, "libraries.deny");
    const stars = [...(next.libraries.allow ?? []), ...next.libraries.deny].reduce((n, p) => n + starCount(p), 0);
    if (stars > MAX_STARS_PER_POLICY) throw invalid(`its patterns have ${stars} "*" in all, more than ${MAX_STARS_PER_POLICY} (allow and deny together)`);
  }
  return next;
}

function patterns(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_PATTERNS) throw invalid(`${field} must be a list of at most ${MAX_PATTERNS} library id patterns${field.endsWith("allow") ? " (or null for all)" : ""}`);
  for (const p of value) {
    const problem = typeof p === "string" ? libraryPatternProblem(p) : "is not a string";
    if (problem !== null) throw invalid(`${field}: ${quote(p)} is not a library id pattern such as /owner/repo, /owner/* or /~team-3/**: it ${problem}`);
  }
  return [...new Set(value as string[])];
}

function unknownKeys(value: Record<string, unknown>, known: string[], prefix: string): void {
  const extra = Object.keys(value).find((k) => !known.includes(k));
  if (extra !== undefined) throw invalid(`${prefix}${extra.slice(0, 40)} is not a policy field (${known.map((k) => prefix + k).join(", ")})`);
}

/** A pattern as the message shows it: JSON, at most 80 characters of it. */
const quote = (p: unknown) => {
  const json = JSON.stringify(p) ?? String(p);
  return json.length > 80 ? `${json.slice(0, 77)}..."` : json;
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function invalid(what: string): LdsError {
  return new LdsError("validation_error", `The policy is not valid: ${what}.`, { hint: 'Send for example {"libraries": {"allow": ["/acme/*"], "deny": []}, "sourceTypes": ["git"]}.' });
}

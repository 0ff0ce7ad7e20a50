import picomatch from "picomatch";
import { LdsError } from "../errors.js";
import type { AccessPolicy, SourceType } from "../store/accounts.js";

export type { AccessPolicy, SourceType };

/**
 * A team's access policy (GET/PATCH /v2/policies, `lds teams restrict`): which source types and which libraries its
 * keys may use, enforced by search, context, MCP and refresh. Library patterns are globs over library ids:
 * `*` within one segment, `**` across segments (`/acme/*`, `/team-3/**`, `/vercel/next.js`).
 * - `sourceTypes`: the kinds of source allowed ("git", "wiki").
 * - `libraries.allow`: null allows every library; a list allows only matching ones (an empty list: none).
 * - `libraries.deny`: matching libraries are refused even when allowed.
 */
export const SOURCE_TYPES: readonly SourceType[] = ["git", "wiki"];

export const OPEN_POLICY: AccessPolicy = { sourceTypes: [...SOURCE_TYPES], libraries: { allow: null, deny: [] } };

const MAX_PATTERNS = 500;
const PATTERN = /^\/[A-Za-z0-9._:*\/-]{1,255}$/;

/** Whether a policy narrows anything (search results then carry searchFilterApplied: true). */
export function isRestrictive(policy: AccessPolicy): boolean {
  return policy.sourceTypes.length < SOURCE_TYPES.length || policy.libraries.allow !== null || policy.libraries.deny.length > 0;
}

/** A matcher of libraries, compiled once per request. */
export function policyMatcher(policy: AccessPolicy): (library: { id: string; source: string }) => boolean {
  const glob = (patterns: string[]) => (patterns.length ? picomatch(patterns, { dot: true }) : () => false);
  const allowed = policy.libraries.allow === null ? () => true : glob(policy.libraries.allow);
  const denied = glob(policy.libraries.deny);
  return (library) => (policy.sourceTypes as string[]).includes(library.source) && allowed(library.id) && !denied(library.id);
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
  }
  return next;
}

function patterns(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_PATTERNS) throw invalid(`${field} must be a list of at most ${MAX_PATTERNS} library id patterns${field.endsWith("allow") ? " (or null for all)" : ""}`);
  const bad = value.find((p) => typeof p !== "string" || !PATTERN.test(p) || p.includes("/.."));
  if (bad !== undefined) throw invalid(`${field}: ${JSON.stringify(bad).slice(0, 80)} is not a library id pattern such as /owner/repo, /owner/* or /team-3/**`);
  return [...new Set(value as string[])];
}

function unknownKeys(value: Record<string, unknown>, known: string[], prefix: string): void {
  const extra = Object.keys(value).find((k) => !known.includes(k));
  if (extra !== undefined) throw invalid(`${prefix}${extra.slice(0, 40)} is not a policy field (${known.map((k) => prefix + k).join(", ")})`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function invalid(what: string): LdsError {
  return new LdsError("validation_error", `The policy is not valid: ${what}.`, { hint: 'Send for example {"libraries": {"allow": ["/acme/*"], "deny": []}, "sourceTypes": ["git"]}.' });
}

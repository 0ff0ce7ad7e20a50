/**
 * The grammar of library ids and the reserved namespace of private (team-scoped) libraries: one definition for
 * every place that makes or reads an id (docs/api.md, "Library ids and sources").
 *
 * - public git, default host: /owner/repo (path segments of letters, digits, '.', '_', '-');
 * - public git, any other host: /<host[:port]>/<path> (host: letters, digits, '.', '-');
 * - private git: /~team-<N>/ followed by either of the above;
 * - wiki space (always private): /~team-<N>/wiki/<space key> (a key may hold '~': Confluence personal spaces).
 *
 * '~' can appear in no git path segment and no accepted host (sources/git-url.ts refuses both), so no public id
 * can ever take the form of a private one: the namespaces cannot collide by construction.
 */

/** What the reserved first segment of a private id starts with ('~': in no path segment and no host). */
const PRIVATE_PREFIX = "~team-";
const PRIVATE_SCOPE = `${PRIVATE_PREFIX}[1-9][0-9]*`;

/** The reserved first segment of a private library's id: `~team-<N>`. */
export function privateScope(teamId: number): string {
  return `${PRIVATE_PREFIX}${teamId}`;
}

/** The team whose private namespace an id lies in (its first segment is `~team-<N>`), else undefined. */
export function privateScopeOf(libraryId: string): number | undefined {
  const match = new RegExp(`^/(${PRIVATE_SCOPE})(?:/|$)`).exec(libraryId);
  return match ? Number(match[1]!.slice(PRIVATE_PREFIX.length)) : undefined;
}

/** A path segment of a repository (and the characters a version name may use). */
export const PATH_SEGMENT = "[A-Za-z0-9._-]{1,100}";
/** A git host as an id names it: DNS-style name, optional port. */
export const HOST = "[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?";
/** A wiki space key as submitted (POST /v2/add/wiki): letters, digits, '_', '-', '~'. */
export const WIKI_KEY = "[A-Za-z0-9_~-]{1,255}";
/**
 * A team scope: the reserved `~team-<N>`, or `team-<N>` of ids created before 0.7.11 (they live on as redirects,
 * and a default-host path may still start with that segment).
 */
const SCOPE = `(?:${PRIVATE_SCOPE}|team-[0-9]{1,12})`;

/**
 * A library id, optionally followed by one more path segment (a pinned version: /owner/repo/v1.2), without
 * anchors: a repository's id (scope, host or owner, path) or a wiki space's. The host position is the only one
 * that may carry a port (and an owner there may hold '_', which no accepted host does).
 */
export const LIBRARY_ID_SOURCE = `/(?:${SCOPE}/wiki/${WIKI_KEY}|(?:${SCOPE}/)?(?:${HOST}|${PATH_SEGMENT})(?:/${PATH_SEGMENT}){1,7})`;

const WHOLE_ID = new RegExp(`^${LIBRARY_ID_SOURCE}$`);

/** Whether `id` is a library id LDS can create (or a version reading of one). */
export function isLibraryId(id: string): boolean {
  return id.length <= 512 && WHOLE_ID.test(id) && !id.includes("/.");
}

import { DEFAULT_GIT_HOST, type GitUrlPolicy } from "../config/git-settings.js";
import { LdsError } from "../errors.js";
import { setting } from "../hints.js";
import { HOST, privateScope } from "../util/library-id.js";

export interface RepositoryUrl {
  url: URL;
  /** host[:port], lower case. */
  host: string;
  /** The repository's path segments without ".git": ["owner", "repo"], or deeper for nested groups. */
  path: string[];
  /** The source a library is pinned to: host and path, lower case. Two URLs of one repository share it. */
  sourceKey: string;
}

const SEGMENT = /^[A-Za-z0-9._-]{1,100}$/;
const MAX_SEGMENTS = 6;
const HOST_NAME = new RegExp(`^${HOST}$`);

/**
 * Check a repository URL before any process sees it: https only (or an allow-listed internal host), no embedded
 * credentials (they would land in logs, process lists and .git/config), and a path of the form /owner/repo
 * (or deeper, for nested groups on other hosts).
 */
export function checkRepositoryUrl(raw: string, policy: GitUrlPolicy = {}): RepositoryUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`"${raw.slice(0, 200)}" is not a URL`);
  }
  if (url.username || url.password) throw invalid("the URL holds credentials; pass the token as gitToken instead");
  const host = url.host.toLowerCase();
  // The host becomes the first segment of a library id: only the characters the id grammar gives a host (the URL
  // parser also accepts '~', '_', '!' and more in a host name; an id must never take the private /~team-N form).
  if (!HOST_NAME.test(host)) {
    throw invalid(`the host "${host.slice(0, 100)}" is not supported: a host name of letters, digits, '.' and '-' (with an optional :port) is required${host.startsWith("[") ? ", not an IPv6 address" : ""}`);
  }
  const internal = policy.allowHttpHosts?.map((h) => h.toLowerCase()).includes(host) ?? false;
  if (url.protocol === "http:" && !internal) {
    throw invalid(`plain http is accepted only for the internal hosts an operator allows (got http://${host})`, true);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid(`only https:// repository URLs are accepted (got ${url.protocol}//${host})`);
  if (url.search || url.hash) throw invalid("the URL must not have a query or fragment");
  const path = url.pathname
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .split("/")
    .filter(Boolean);
  if (path.length < 2 || path.length > MAX_SEGMENTS || !path.every((s) => SEGMENT.test(s) && !s.startsWith("."))) {
    throw invalid("the URL's path must be /owner/repo (or /group/subgroup/repo), of letters, digits, '.', '_' and '-'");
  }
  return { url, host, path, sourceKey: `${host}/${path.join("/")}`.toLowerCase() };
}

/**
 * The library id of a repository (docs/api.md, "Library ids"): /owner/repo on the default host, /<host>/<path> on
 * any other. A private library is scoped to its team under the reserved prefix (/~team-<id>/..., which no path or
 * host can produce): two teams may index the same private repository, no answer tells one team what another has
 * indexed, and no public submission can create an id in a team's namespace.
 */
export function gitLibraryId(repository: RepositoryUrl, options: { defaultHost?: string; privateTeamId?: number }): string {
  const defaultHost = (options.defaultHost ?? DEFAULT_GIT_HOST).toLowerCase();
  const segments = repository.host === defaultHost ? repository.path : [repository.host, ...repository.path];
  const scope = options.privateTeamId === undefined ? [] : [privateScope(options.privateTeamId)];
  return "/" + [...scope, ...segments].join("/");
}

function invalid(what: string, httpRefused = false): LdsError {
  return new LdsError("repository_url_invalid", `Repository URL refused: ${what}.`, {
    hint: httpRefused
      ? `Use the https:// clone URL, or allow the internal host (host:port) with ${setting("gitHttpHosts")} (docs/operations.md).`
      : "Use the https:// clone URL of the repository, e.g. https://github.com/owner/repo.",
  });
}

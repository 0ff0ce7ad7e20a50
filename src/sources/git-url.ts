import { LdsError } from "../errors.js";

export interface GitUrlPolicy {
  /** Hosts (host or host:port) also allowed over plain http, for internal git servers. @default [] */
  allowHttpHosts?: string[];
  /** Largest checkout accepted. @default 512 MiB */
  maxRepositoryBytes?: number;
}

/**
 * Check a repository URL before any process sees it: https only (or an allow-listed internal host), no embedded
 * credentials (they would land in logs, process lists and .git/config), and a path of the form /owner/repo.
 * Returns the library id `/owner/repo`.
 */
export function checkRepositoryUrl(raw: string, policy: GitUrlPolicy = {}): { url: URL; libraryId: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`"${raw.slice(0, 200)}" is not a URL`);
  }
  if (url.username || url.password) throw invalid("the URL holds credentials; pass the token as gitToken instead");
  const internal = policy.allowHttpHosts?.includes(url.host) ?? false;
  if (url.protocol !== "https:" && !(url.protocol === "http:" && internal)) {
    throw invalid(`only https:// repository URLs are accepted (got ${url.protocol}//${url.host})`);
  }
  if (url.search || url.hash) throw invalid("the URL must not have a query or fragment");
  const parts = url.pathname.replace(/\.git$/, "").split("/").filter(Boolean);
  const [owner, repo] = parts.slice(-2);
  const segment = /^[A-Za-z0-9._-]{1,100}$/;
  if (!owner || !repo || !segment.test(owner) || !segment.test(repo) || owner.startsWith(".") || repo.startsWith(".")) {
    throw invalid("the URL's path must end in /owner/repo");
  }
  return { url, libraryId: `/${owner}/${repo}` };
}

function invalid(what: string): LdsError {
  return new LdsError("repository_url_invalid", `Repository URL refused: ${what}.`, {
    hint: "Use the https:// clone URL of the repository, e.g. https://github.com/owner/repo.",
  });
}

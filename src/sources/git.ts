import fs from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { LdsError } from "../errors.js";
import { setting } from "../hints.js";
import { redactToken } from "../util/redact.js";

export interface FetchOptions {
  url: URL;
  /** Branch to fetch; the remote's default branch when absent. */
  branch?: string;
  /** Sent as HTTP Basic credentials through git's environment: never in argv, .git/config, logs or messages. */
  token?: string;
  /** An empty directory to clone into (on the data volume; the caller removes it). */
  dir: string;
  /** A CA bundle (PEM) to trust for https, for git hosts behind an internal CA. */
  caFile?: string;
  /** Refuse repositories whose checkout exceeds this. @default 512 MiB */
  maxBytes?: number;
  signal?: AbortSignal;
}

/** Shallow, single-branch clone with the system git. Returns the checked-out branch and commit. */
export async function fetchRepository(options: FetchOptions): Promise<{ branch: string; commit: string }> {
  const args = ["clone", "--quiet", "--depth", "1", "--single-branch", "--no-tags"];
  if (options.branch) args.push("--branch", options.branch);
  await git([...args, "--", options.url.href, options.dir], options);
  const limit = options.maxBytes ?? 512 * 1024 * 1024;
  const size = await directorySize(options.dir, limit);
  if (size > limit) {
    throw new LdsError("repository_too_large", `The repository's checkout is larger than the ${Math.round(limit / 1048576)} MiB limit.`, {
      hint: "Ask an admin to raise the limit, or point the library at a smaller documentation repository.",
    });
  }
  const branch = (await git(["-C", options.dir, "rev-parse", "--abbrev-ref", "HEAD"], options)).trim();
  const commit = (await git(["-C", options.dir, "rev-parse", "HEAD"], options)).trim();
  return { branch, commit };
}

/**
 * The commit a branch or tag (or the default branch) points to, without cloning: a refresh with nothing new stops
 * here. A branch wins over a tag of the same name (as in `git clone --branch`); an annotated tag is peeled to its
 * commit, which is what a clone of it checks out.
 */
export async function remoteHead(options: Omit<FetchOptions, "dir" | "maxBytes">): Promise<string> {
  const name = options.branch;
  const refs = name ? [`refs/heads/${name}`, `refs/tags/${name}^{}`, `refs/tags/${name}`] : ["HEAD"];
  // The peeled line of an annotated tag (refs/tags/x^{}: the commit) is only listed when asked for by name.
  const out = await git(["ls-remote", "--", options.url.href, ...refs], options);
  const lines = out.split("\n").map((line) => line.split("\t"));
  const commit = refs.map((ref) => lines.find((l) => l[1] === ref)?.[0]).find(Boolean);
  if (!commit) {
    throw new LdsError("repository_not_found", `The repository has no ${name ? `branch or tag "${name}"` : "default branch"}.`, {
      hint: "Check the branch or tag name.",
    });
  }
  return commit;
}

export type GitOptions = { url: URL; token?: string; caFile?: string; signal?: AbortSignal; dir?: string };

async function git(args: string[], options: GitOptions): Promise<string> {
  const env: Record<string, string> = {
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_ASKPASS: "/bin/false",
    GCM_INTERACTIVE: "never",
  };
  if (options.caFile) env.GIT_SSL_CAINFO = options.caFile;
  if (options.token) {
    const basic = Buffer.from(`x-access-token:${options.token}`).toString("base64");
    Object.assign(env, { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "http.extraHeader", GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` });
  }
  const result = await execa("git", args, { env, extendEnv: true, reject: false, cancelSignal: options.signal, timeout: 10 * 60_000 });
  if (result.exitCode === 0) return String(result.stdout);
  throw gitError(String(result.stderr), options);
}

/**
 * Map git's stderr to an error an operator can act on; the token is scrubbed from anything quoted. HTTP statuses
 * count only where git reports one ("The requested URL returned error: 403"): git quotes the URL in its messages,
 * and a port or path holding "403" (https://host:40312/…) made a certificate failure read as a refused token.
 */
export function gitError(stderr: string, options: GitOptions): LdsError {
  const scrub = (s: string) => redactToken(s, options.token).trim().split("\n").pop()!.slice(0, 300);
  const where = `${options.url.host}${options.url.pathname}`;
  if (/No space left on device|Disk quota exceeded/i.test(stderr) || (/unable to write|write error|unable to checkout|unable to create/i.test(stderr) && nearlyFull(options.dir))) {
    return new LdsError("disk_full", `No space left on the data volume while fetching ${where}.`, { hint: "Free space on the data volume's filesystem, then refresh the library." });
  }
  // 403: the host knows who asks and says no (a token without access to this repository); 401 and git's own
  // "Authentication failed": no valid credentials at all (a mistyped, expired or revoked token). Different fixes.
  if (/returned error: 403\b/i.test(stderr)) {
    return new LdsError("repository_auth_failed", `${where} refused access (HTTP 403)${options.token ? " to the given token" : " without a token"}.`, {
      hint: options.token
        ? "The host accepted the token but it may not read this repository: give the token (or its account) read access to it, or use a token that has it."
        : "The host does not let anonymous clients read it: pass a gitToken or connect an account, or check the host's IP allow-list and rate limits.",
    });
  }
  if (/Authentication failed|could not read Username|returned error: 401\b|terminal prompts disabled/i.test(stderr)) {
    return new LdsError("repository_auth_failed", `${where} refused access${options.token ? " with the given token" : " without a token"}.`, {
      hint: options.token
        ? "The host did not accept the token (mistyped, expired or revoked): create a new one that may read this repository and save it again."
        : "For a private repository, pass a gitToken or connect an account.",
    });
  }
  if (/not found|does not exist|Remote branch .* not found|returned error: 404\b/i.test(stderr)) {
    return new LdsError("repository_not_found", `${where}: repository or branch not found (${scrub(stderr)}).`, { hint: "Check the URL and the branch name." });
  }
  if (/SSL certificate problem|certificate verify failed|server certificate verification failed/i.test(stderr)) {
    return new LdsError("repository_unreachable", `Cannot reach ${options.url.host} (${scrub(stderr)}).`, {
      hint: `The host's certificate is not trusted here: for an internal CA, set ${setting("gitCaFile")} to its PEM bundle (docs/operations.md).`,
    });
  }
  if (/Could not resolve host|Connection refused|timed out|unable to access/i.test(stderr)) {
    return new LdsError("repository_unreachable", `Cannot reach ${options.url.host} (${scrub(stderr)}).`, { hint: "Check the URL and the network." });
  }
  return new LdsError("repository_unreachable", `git failed for ${where}: ${scrub(stderr)}.`, { hint: "Check the URL, the token and the network." });
}

/** git says "unable to write file", not "no space left", when a checkout fills the disk: look at the disk. */
function nearlyFull(dir: string | undefined): boolean {
  if (!dir) return false;
  const stats = fs.statfsSync(path.dirname(dir));
  return stats.bavail * stats.bsize < 16 * 1024 * 1024;
}

/** Bytes below `dir` (stops counting past `stopAt`), read asynchronously: a server keeps answering meanwhile. */
async function directorySize(dir: string, stopAt: number): Promise<number> {
  let total = 0;
  const walk = async (d: string): Promise<void> => {
    for (const entry of await fs.promises.readdir(d, { withFileTypes: true })) {
      if (total > stopAt) return;
      const full = `${d}/${entry.name}`;
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) total += (await fs.promises.stat(full)).size;
    }
  };
  await walk(dir);
  return total;
}

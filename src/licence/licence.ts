import fs from "node:fs";
import path from "node:path";
import { LdsError } from "../errors.js";

/**
 * The licence: `{"licensee": "…", "expiresAt": "2027-01-01T00:00:00Z"}`, from LDS_LICENSE (the JSON itself, or
 * base64 of it) or else <data-dir>/license.json. No licence means the community edition, which never expires.
 * An expired or unreadable licence closes the public API (403) and nothing else: login, backups and restores keep
 * working, so that an operator can always save and move their data (spec: backup endpoints work when expired).
 */
export interface Licence {
  state: "community" | "valid" | "expired" | "invalid";
  licensee: string | null;
  expiresAt: string | null;
  source: string | null;
  problem: string | null;
}

/** `inline`: a licence given in the server's settings (its JSON, or base64 of it), which wins over the file. */
export function loadLicence(dataDir: string, inline: string | undefined, now = new Date()): Licence {
  const file = path.join(dataDir, "license.json");
  let raw: string | undefined;
  let source: string | null = null;
  if (inline) {
    raw = inline.startsWith("{") ? inline : Buffer.from(inline, "base64").toString("utf8");
    source = "LDS_LICENSE";
  } else if (fs.existsSync(file)) {
    raw = fs.readFileSync(file, "utf8");
    source = file;
  }
  if (raw === undefined) return { state: "community", licensee: null, expiresAt: null, source: null, problem: null };
  try {
    const parsed = JSON.parse(raw) as { licensee?: unknown; expiresAt?: unknown };
    const expires = typeof parsed.expiresAt === "string" ? Date.parse(parsed.expiresAt) : NaN;
    if (typeof parsed.licensee !== "string" || Number.isNaN(expires)) throw new Error("needs licensee and expiresAt");
    return {
      state: expires > now.getTime() ? "valid" : "expired",
      licensee: parsed.licensee,
      expiresAt: new Date(expires).toISOString(),
      source,
      problem: null,
    };
  } catch (err) {
    return { state: "invalid", licensee: null, expiresAt: null, source, problem: (err as Error).message };
  }
}

/**
 * Throw the error the public API answers with, if the licence does not allow it now. Its callers include
 * unauthenticated clients: an unreadable licence is named as invalid, without the file's path or the parser's words
 * (those go to the operator's log, publicApiLicenceCheck).
 */
export function assertLicenceAllowsPublicApi(licence: Licence, now = new Date()): void {
  if (licence.state === "invalid") {
    throw new LdsError("license_invalid", "The server's licence is invalid, so its public API is closed. Backups and the admin API keep working.", {
      hint: "Ask the server's operator to install a valid licence: the server's log says what is wrong with the current one.",
    });
  }
  if (licence.expiresAt && Date.parse(licence.expiresAt) <= now.getTime()) {
    throw new LdsError("license_expired", `The licence of ${licence.licensee} expired on ${licence.expiresAt}; the public API is closed. Backups and the admin API keep working.`);
  }
}

/**
 * The check of every public API request: the licence as `read` gives it now, refused as assertLicenceAllowsPublicApi
 * says. What is wrong with an unreadable licence (where it came from and the parser's words) is reported to `report`
 * (the server's log) once per distinct problem, not once per refused request.
 */
export function publicApiLicenceCheck(read: () => Licence, report: (source: string | null, problem: string | null) => void): () => void {
  let reported: string | undefined;
  return () => {
    const licence = read();
    // Reported again only when it changes: a problem fixed and then back is a new one.
    const problem = licence.state === "invalid" ? `${licence.source}\n${licence.problem}` : undefined;
    if (problem !== undefined && problem !== reported) report(licence.source, licence.problem);
    reported = problem;
    assertLicenceAllowsPublicApi(licence);
  };
}

/**
 * The licence for every public request, re-read only when license.json changes (inode, size or modification time): a
 * renewed file still applies without a restart, without reading and parsing the file on each request. Expiry is
 * judged against the clock at each check (assertLicenceAllowsPublicApi), so caching the parsed licence is safe.
 */
export function licenceReader(dataDir: string, inline: string | undefined): () => Licence {
  const file = path.join(dataDir, "license.json");
  let cached: { stamp: string; licence: Licence } | undefined;
  return () => {
    let stamp = "absent";
    if (!inline) {
      try {
        const stat = fs.statSync(file);
        stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
      } catch {
        // no file: the community edition
      }
    }
    if (cached?.stamp !== stamp) cached = { stamp, licence: loadLicence(dataDir, inline) };
    return cached.licence;
  };
}

import { LdsError } from "../errors.js";

/** Clients pin a version as /owner/repo/<version> or /owner/repo@<version>: its name must be writable in both. */
export function checkVersionName(version: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(version)) {
    throw new LdsError("validation_error", `"${version.slice(0, 100)}" cannot be a version name: use letters, digits, ".", "_" and "-" (e.g. v1.2.0).`);
  }
}

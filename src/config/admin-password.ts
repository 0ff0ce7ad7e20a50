import fs from "node:fs";
import { LdsError } from "../errors.js";

/**
 * The first admin's password, from LDS_ADMIN_PASSWORD_FILE (preferred: a file readable by the service only, e.g. a
 * systemd credential) or LDS_ADMIN_PASSWORD. Read once, then removed from this process's environment so that no
 * child process (git, for every ingestion) inherits it. The kernel keeps the environment a process started with
 * in /proc/PID/environ: that is why the file is the recommended way (docs/operations.md).
 */
export function takeAdminPassword(env: NodeJS.ProcessEnv): string | undefined {
  const file = env.LDS_ADMIN_PASSWORD_FILE;
  const inline = env.LDS_ADMIN_PASSWORD;
  delete env.LDS_ADMIN_PASSWORD;
  if (!file) return inline || undefined;
  try {
    return fs.readFileSync(file, "utf8").replace(/\r?\n$/, "") || undefined;
  } catch (err) {
    throw new LdsError("validation_error", `LDS_ADMIN_PASSWORD_FILE ${file} cannot be read (${(err as NodeJS.ErrnoException).code}).`, {
      hint: "Point it at a file holding the password, readable by the user LDS runs as.",
    });
  }
}

import fs from "node:fs";
import path from "node:path";
import { LdsError } from "../errors.js";
import { checkLocalDirectory } from "./local-path.js";
import type { DestinationDriver } from "./driver.js";
import { createLocalDestination } from "./local.js";

/** Directories on this machine or a mounted network share: any location that names no other driver's scheme. */
export const localDriver: DestinationDriver = {
  kind: "local",
  scheme: null,
  label: "Local options:",
  settings: [],
  // An absolute path, or null for <data-dir>/backups.
  config: { properties: { path: { type: ["string", "null"], minLength: 1, maxLength: 4096 } } },
  locationOf: (config, defaults) => (typeof config.path === "string" && config.path ? config.path : defaults.backupsDir),
  open: async (location) => createLocalDestination({ dir: path.resolve(location) }),
  async checkConfig(config, volume) {
    if (typeof config.path === "string" && config.path) await checkWritable(config.path, volume.dataDir);
  },
  openArchive: async (location) => ({
    destination: createLocalDestination({ dir: path.dirname(path.resolve(location)) }),
    name: path.basename(location),
  }),
};

/** A configured path must be a writable directory on a real filesystem, and not the data directory itself. */
async function checkWritable(dir: string, dataDir: string): Promise<void> {
  checkLocalDirectory(dir);
  if (path.resolve(dir) === path.resolve(dataDir)) {
    throw new LdsError("validation_error", "destination.path must not be the data directory itself.", { hint: "Use a subdirectory, ideally on another disk." });
  }
  try {
    // On the thread pool: a filesystem call that hangs must not stop the event loop.
    await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    await fs.promises.access(dir, fs.constants.W_OK);
  } catch (err) {
    throw new LdsError("validation_error", `destination.path ${dir} is not a writable directory (${(err as NodeJS.ErrnoException).code}).`, {
      hint: "Create it and give the LDS user write access, or choose another path.",
    });
  }
}

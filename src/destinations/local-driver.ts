import path from "node:path";
import type { DestinationDriver } from "./driver.js";
import { createLocalDestination } from "./local.js";

/** Directories on this machine or a mounted network share: any location that names no other driver's scheme. */
export const localDriver: DestinationDriver = {
  kind: "local",
  scheme: null,
  label: "Local options:",
  settings: [],
  locationOf: (config, defaults) => (typeof config.path === "string" && config.path ? config.path : defaults.backupsDir),
  open: async (location) => createLocalDestination({ dir: path.resolve(location) }),
  openArchive: async (location) => ({
    destination: createLocalDestination({ dir: path.dirname(path.resolve(location)) }),
    name: path.basename(location),
  }),
};

import { dataVolume, resolveDataDir } from "../config/data-volume.js";
import type { Destination } from "../destinations/destination.js";
import { openLocation } from "../destinations/registry.js";
import { refuseUnsharedDefault } from "../ops/configured-destination.js";
import { commandDatabase } from "./database.js";

/** The data directory and the destination drivers' flags (s3Region, …: destinations/registry.ts). */
export interface DestinationArgs {
  dataDir?: string;
  [flag: string]: unknown;
}

/**
 * The destination an operator named (`--to` / `--from`), or the data volume's own backups/ folder, which a database
 * shared by replicas refuses (each replica would keep archives of its own).
 */
export function destinationFromArgs(spec: string | undefined, args: DestinationArgs): Promise<Destination> {
  const volume = dataVolume(resolveDataDir(args.dataDir, process.env), commandDatabase());
  if (spec === undefined) refuseUnsharedDefault(volume);
  return openLocation(spec ?? volume.backups, args, process.env);
}

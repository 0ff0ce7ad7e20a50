import { dataVolume, resolveDataDir } from "../config/data-volume.js";
import type { Destination } from "../destinations/destination.js";
import { openLocation } from "../destinations/registry.js";

/** The data directory and the destination drivers' flags (s3Region, …: destinations/registry.ts). */
export interface DestinationArgs {
  dataDir?: string;
  [flag: string]: unknown;
}

/** The destination an operator named (`--to` / `--from`), or the data volume's own backups/ folder. */
export function destinationFromArgs(spec: string | undefined, args: DestinationArgs): Promise<Destination> {
  const fallback = dataVolume(resolveDataDir(args.dataDir, process.env)).backups;
  return openLocation(spec ?? fallback, args, process.env);
}

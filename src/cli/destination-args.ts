import { dataVolume, resolveDataDir } from "../config/data-volume.js";
import type { Destination } from "../destinations/destination.js";
import { destinationFor, s3Settings } from "../destinations/location.js";

export interface DestinationArgs {
  dataDir?: string;
  s3Region?: string;
  s3Endpoint?: string;
  s3PathStyle?: boolean;
  s3AccessKeyId?: string;
  s3SecretAccessKeyFile?: string;
}

/** The destination an operator named (`--to` / `--from`), or the data volume's own backups/ folder. */
export function destinationFromArgs(spec: string | undefined, args: DestinationArgs): Promise<Destination> {
  const fallback = dataVolume(resolveDataDir(args.dataDir)).backups;
  return destinationFor(spec ?? fallback, s3Settings(args));
}


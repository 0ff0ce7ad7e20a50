import type { Destination } from "./destination.js";

/**
 * A setting of a destination driver besides its location, declared once and read by every shell: the CLI as a flag
 * and an environment variable, the server's configuration as a field. Hints and forms name it by `key`.
 */
export interface DriverSetting {
  /** The configuration field, e.g. "region". */
  key: string;
  type: "string" | "boolean";
  /** CLI flag without dashes, e.g. "s3-region". */
  flag: string;
  /** Environment variable, e.g. "LDS_S3_REGION". */
  env: string;
  describe: string;
  /** What applies when neither flag nor environment gives it, for help texts, e.g. "us-east-1". */
  fallback?: string;
  /**
   * Never taken from a flag's value (command lines show in `ps` and shell history): from the environment, or from a
   * file named by the flag `${flag}-file`; write-only in the server's configuration.
   */
  secret?: boolean;
}

export type DriverSettings = Record<string, string | boolean | undefined>;

/** A destination driver declares itself here; registry.ts lists the drivers. */
export interface DestinationDriver {
  kind: string;
  /** Locations of this driver start with `${scheme}://`; null: a filesystem path (the fallback driver). */
  scheme: string | null;
  /** Heading of its CLI options, e.g. "S3 options:". */
  label: string;
  settings: DriverSetting[];
  /**
   * JSON Schema of the configuration's fields besides `type` and the secret settings (those are added for every
   * driver: the write-only `<key>` and the read-only `<key>Set`). Defaults fill what a request leaves out.
   */
  config: { required?: string[]; properties: Record<string, object> };
  /** Checks of a configuration before it is saved that a schema cannot make (the server answers 400 with them). */
  checkConfig?(config: Record<string, unknown>, volume: { dataDir: string }): Promise<void>;
  /** The location a stored configuration of this driver names (its fields as in PUT /api/backup/config). */
  locationOf(config: Record<string, unknown>, defaults: { backupsDir: string }): string;
  /** The destination at a location an operator typed (a directory, s3://bucket/prefix). */
  open(location: string, settings: DriverSettings): Promise<Destination>;
  /** An archive named by its full location (s3://bucket/prefix/lds-backup-….tar): where it is and its name. */
  openArchive(location: string, settings: DriverSettings): Promise<{ destination: Destination; name: string }>;
}

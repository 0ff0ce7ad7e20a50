import type Database from "better-sqlite3";
import { loadDestinationSecret, type BackupConfig } from "./backup-config.js";
import { dataVolume } from "../config/data-volume.js";
import type { Destination } from "../destinations/destination.js";
import { openConfigured } from "../destinations/registry.js";

/** The Destination the stored configuration describes, through its driver (a driver's SDK loads only when used). */
export function configuredDestination(config: BackupConfig, dataDir: string, db: Database.Database, key: Buffer): Promise<Destination> {
  const destination = config.destination as unknown as { type: string } & Record<string, unknown>;
  return openConfigured(destination, (field) => loadDestinationSecret(db, key, destination.type, field), { backupsDir: dataVolume(dataDir).backups });
}

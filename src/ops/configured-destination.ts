import { loadBackupConfig, loadDestinationSecrets, type BackupConfig } from "./backup-config.js";
import { dataVolume, type DataVolume } from "../config/data-volume.js";
import type { DatabaseSettings } from "../config/database-settings.js";
import type { Destination } from "../destinations/destination.js";
import { driverOfKind, openConfigured } from "../destinations/registry.js";
import { chooseEngine } from "../engine/choose-engine.js";
import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";

/**
 * The Destination the stored configuration describes, through its driver (a driver's SDK loads only when used).
 * `database`: the volume's engine settings; a database shared by replicas refuses the default local folder.
 */
export async function configuredDestination(config: BackupConfig, dataDir: string, store: Store, database?: DatabaseSettings): Promise<Destination> {
  const destination = config.destination as unknown as { type: string } & Record<string, unknown>;
  const volume = dataVolume(dataDir, database);
  if (driverOfKind(destination.type).locationOf(destination, { backupsDir: volume.backups }) === volume.backups) refuseUnsharedDefault(volume);
  const secrets = await loadDestinationSecrets(store, destination.type);
  return openConfigured(destination, (field) => secrets.get(field), { backupsDir: volume.backups });
}

/** The Destination of the configuration stored now (the archive list, downloads, restores from the server). */
export async function storedDestination(store: Store, dataDir: string, database?: DatabaseSettings): Promise<Destination> {
  return configuredDestination(await loadBackupConfig(store), dataDir, store, database);
}

/**
 * The default destination, `<data dir>/backups`, is one replica's own folder: with a database several replicas share,
 * each would keep (and prune, and list) archives of its own. Refused there: validation_error.
 */
export function refuseUnsharedDefault(volume: DataVolume): void {
  const engine = chooseEngine(volume);
  if (!engine.sharedByReplicas) return;
  throw new LdsError(
    "validation_error",
    `The default backup destination ${volume.backups} is this replica's own folder: with a ${engine.title} database every replica would keep archives of its own, so it is refused.`,
    { hint: "Configure a shared destination: a path on storage every replica mounts, or an S3 bucket." },
  );
}

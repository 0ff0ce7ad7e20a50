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
  if (namesTheDefault(config, volume)) refuseUnsharedDefault(volume);
  const secrets = await loadDestinationSecrets(store, destination.type);
  return openConfigured(destination, (field) => secrets.get(field), { backupsDir: volume.backups });
}

/** The Destination of the configuration stored now (the archive list, downloads, restores from the server). */
export async function storedDestination(store: Store, dataDir: string, database?: DatabaseSettings): Promise<Destination> {
  return configuredDestination(await loadBackupConfig(store), dataDir, store, database);
}

/** Whether the configuration names the volume's own `<data dir>/backups` (set, or left to the default). */
function namesTheDefault(config: BackupConfig, volume: DataVolume): boolean {
  const destination = config.destination as unknown as { type: string } & Record<string, unknown>;
  return driverOfKind(destination.type).locationOf(destination, { backupsDir: volume.backups }) === volume.backups;
}

/**
 * The refusal of a configuration that names the replica's own folder on a database replicas share (below), or
 * undefined: a server answers a backup asked for with it at once, rather than accept one that cannot run.
 */
export function unsharedDefaultRefusal(config: BackupConfig, dataDir: string, database?: DatabaseSettings): LdsError | undefined {
  const volume = dataVolume(dataDir, database);
  if (!namesTheDefault(config, volume)) return undefined;
  try {
    refuseUnsharedDefault(volume);
    return undefined;
  } catch (err) {
    return err as LdsError;
  }
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

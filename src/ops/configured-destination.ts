import { loadBackupConfig, loadDestinationSecrets, type BackupConfig } from "./backup-config.js";
import { dataVolume } from "../config/data-volume.js";
import type { Destination } from "../destinations/destination.js";
import { openConfigured } from "../destinations/registry.js";
import type { Store } from "../store/store.js";

/** The Destination the stored configuration describes, through its driver (a driver's SDK loads only when used). */
export async function configuredDestination(config: BackupConfig, dataDir: string, store: Store): Promise<Destination> {
  const destination = config.destination as unknown as { type: string } & Record<string, unknown>;
  const secrets = await loadDestinationSecrets(store, destination.type);
  return openConfigured(destination, (field) => secrets.get(field), { backupsDir: dataVolume(dataDir).backups });
}

/** The Destination of the configuration stored now (the archive list, downloads, restores from the server). */
export async function storedDestination(store: Store, dataDir: string): Promise<Destination> {
  return configuredDestination(await loadBackupConfig(store), dataDir, store);
}

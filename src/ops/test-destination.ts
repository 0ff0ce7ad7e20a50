import { loadDestinationSecrets, type DestinationConfig } from "./backup-config.js";
import { dataVolume } from "../config/data-volume.js";
import { driverOfKind, openConfigured } from "../destinations/registry.js";
import type { Store } from "../store/store.js";

export interface DestinationTest {
  ok: true;
  destination: string;
  durationMs: number;
}

/**
 * "Test connection": the destination as the operator is editing it (saved or not) writes, reads back and deletes
 * a probe. A secret left out of the request is the stored one (the form never holds it); "" means none.
 * Throws the driver's LdsError, which names the step that failed.
 */
export async function testDestination(store: Store, dataDir: string, config: DestinationConfig): Promise<DestinationTest> {
  const started = Date.now();
  await driverOfKind(config.type).checkConfig?.(config, { dataDir });
  const stored = await loadDestinationSecrets(store, config.type);
  const secretOf = (key: string) => {
    const given = config[key];
    return typeof given === "string" ? given || undefined : stored.get(key);
  };
  const destination = await openConfigured(config as DestinationConfig & Record<string, unknown>, secretOf, { backupsDir: dataVolume(dataDir).backups });
  await destination.probe();
  return { ok: true, destination: destination.description, durationMs: Date.now() - started };
}

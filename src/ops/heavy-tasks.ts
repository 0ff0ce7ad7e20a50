import { checkExtractedSnapshot } from "../archive/check-snapshot.js";
import { copyRecordsAndKey, describeSnapshot, snapshotVolume } from "../snapshot/snapshot-volume.js";

/**
 * Engine work that may block its thread for seconds (the SQLite engine's snapshots, their description, checks) and
 * so may run in a worker thread (see heavy-work.ts): called by name, inline or there. Each task picks the engine
 * from its arguments (the volume's settings, or the archive's format).
 */
export const HEAVY_TASKS = { snapshotVolume, copyRecordsAndKey, describeSnapshot, checkExtractedSnapshot };
export type HeavyTask = keyof typeof HEAVY_TASKS;

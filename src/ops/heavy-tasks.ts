import { checkExtractedSnapshot } from "../archive/check-snapshot.js";
import { copyDatabaseAndKey, describeSnapshot, snapshotVolume } from "../snapshot/snapshot-volume.js";

/** SQLite work (snapshots, their description, checks) that may run in a worker thread (see heavy-work.ts): called by name, inline or there. */
export const HEAVY_TASKS = { snapshotVolume, copyDatabaseAndKey, describeSnapshot, checkExtractedSnapshot };
export type HeavyTask = keyof typeof HEAVY_TASKS;

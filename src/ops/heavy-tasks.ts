import { checkExtractedSnapshot } from "../archive/check-snapshot.js";
import { snapshotVolume } from "../snapshot/snapshot-volume.js";
import { hashStagedFiles } from "../archive/write-archive.js";

/** Synchronous work (SQLite snapshots and checks, hashing) that may run in a worker thread (see heavy-work.ts): called by name, inline or there. */
export const HEAVY_TASKS = { snapshotVolume, hashStagedFiles, checkExtractedSnapshot };
export type HeavyTask = keyof typeof HEAVY_TASKS;

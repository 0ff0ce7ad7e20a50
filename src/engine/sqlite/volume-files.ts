import path from "node:path";
import type { DataVolume } from "../../config/data-volume.js";
import type { VolumeDatabases } from "../engine.js";

/** The SQLite engine's files of a volume: lds.db (the records, and their full-text index) and vectors.db. */
export function sqliteFiles(volume: DataVolume): VolumeDatabases {
  return { records: path.join(volume.root, "lds.db"), vectors: path.join(volume.root, "vectors.db") };
}

/** The live files a restore replaces, SQLite's side files included (their loss would drop committed data), and the key. */
export function sqliteLiveFiles(volume: DataVolume): string[] {
  const withSideFiles = (db: string) => [db, `${db}-wal`, `${db}-shm`];
  const { records, vectors } = sqliteFiles(volume);
  return [...withSideFiles(records), ...withSideFiles(vectors), volume.key];
}

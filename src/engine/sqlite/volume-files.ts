import type { DataVolume } from "../../config/data-volume.js";
import type { VolumeDatabases } from "../engine.js";

/** The SQLite engine's files of a volume: lds.db (the records, and their full-text index) and vectors.db. */
export function sqliteFiles(volume: DataVolume): VolumeDatabases {
  return { records: volume.db, vectors: volume.vectors };
}

/** The live files a restore replaces, SQLite's side files included (their loss would drop committed data), and the key. */
export function sqliteLiveFiles(volume: DataVolume): string[] {
  const withSideFiles = (db: string) => [db, `${db}-wal`, `${db}-shm`];
  return [...withSideFiles(volume.db), ...withSideFiles(volume.vectors), volume.key];
}

import path from "node:path";
import type { DataVolume } from "../../config/data-volume.js";
import type { VolumeDatabases } from "../engine.js";

/** The SQLite engine's files: lds.db (the records, and their full-text index) and vectors.db (the vector index). */
export const SQLITE_FILE_NAMES: VolumeDatabases = { records: "lds.db", vectors: "vectors.db" };

/** Where a volume's SQLite files are. */
export function sqliteFiles(volume: DataVolume): VolumeDatabases {
  return { records: path.join(volume.root, SQLITE_FILE_NAMES.records), vectors: path.join(volume.root, SQLITE_FILE_NAMES.vectors) };
}

/** The live files a restore replaces, SQLite's side files included (their loss would drop committed data), and the key. */
export function sqliteLiveFiles(volume: DataVolume): string[] {
  const withSideFiles = (db: string) => [db, `${db}-wal`, `${db}-shm`];
  const { records, vectors } = sqliteFiles(volume);
  return [...withSideFiles(records), ...withSideFiles(vectors), volume.key];
}

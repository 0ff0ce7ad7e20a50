import fs from "node:fs";
import Database from "better-sqlite3";
import type { DataVolume } from "../../config/data-volume.js";
import { LdsError, fromSystemError } from "../../errors.js";
import { setting } from "../../hints.js";
import type { SnapshotDescription } from "../engine.js";
import { schemaVersion } from "./migrate.js";
import { keyMismatch } from "./key-match.js";
import { librariesOfSnapshot } from "./manifest-view.js";
import { canariesOf } from "./canaries.js";
import { copyDatabase } from "./copy-database.js";
import { sqliteFiles } from "./volume-files.js";

/**
 * The online snapshot of a SQLite volume (the steps ops/backup.ts orders): vectors.db is copied first (its state is
 * taken before lds.db's: a snippet written between the two then lacks a vector, which re-indexing fixes, rather than
 * the reverse), then lds.db and the key, then the copy of lds.db is described for the manifest.
 */

/** Check that the volume is whole before anything is copied. */
export function checkWhole(volume: DataVolume): void {
  for (const [label, file] of [
    ["database", sqliteFiles(volume).records],
    ["vector index", sqliteFiles(volume).vectors],
    ["key", volume.key],
  ] as const) {
    if (!fs.existsSync(file)) {
      throw new LdsError("data_dir_invalid", `The ${label} ${file} does not exist: ${volume.root} is not an initialised data volume.`, {
        hint: `Check ${setting("dataDir")}; the server creates the volume on its first start.`,
      });
    }
  }
}

/** The second step: copy lds.db and the key, and refuse a key that is not lds.db's. */
export async function copyDatabaseAndKey(volume: DataVolume, target: { records: string; key: string }): Promise<void> {
  await copyDatabase(sqliteFiles(volume).records, target.records, false);
  try {
    fs.copyFileSync(volume.key, target.key);
    fs.chmodSync(target.key, 0o600);
  } catch (err) {
    throw fromSystemError(err, volume.key);
  }
  refuseForeignKey(target.records, target.key, volume);
}

/** An archive whose key does not belong to its database restores into a server that cannot start: never write one. */
function refuseForeignKey(dbFile: string, keyFile: string, volume: DataVolume): void {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const mismatch = keyMismatch(db, fs.readFileSync(keyFile));
    if (mismatch) {
      throw new LdsError("key_missing", `${volume.key} is not the key ${sqliteFiles(volume).records} was sealed with (${mismatch}); no archive was written.`, {
        hint: `Put back the secret.key that belongs to ${sqliteFiles(volume).records} (a pre-restore-* folder or an older archive holds it), then back up again.`,
      });
    }
  } finally {
    db.close();
  }
}

/** Read the manifest's view of the libraries from the snapshot itself, so it matches what the archive holds. */
export function describeSnapshot(dbFile: string): SnapshotDescription {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    // It runs beside the hashing thread at a backup's peak of memory; a 16 MiB page cache made no query faster.
    db.pragma("cache_size = -2048");
    const version = schemaVersion(db);
    return { schemaVersion: version, ...librariesOfSnapshot(db), canaries: canariesOf(db) };
  } finally {
    db.close();
  }
}

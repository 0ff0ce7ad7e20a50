import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { DataVolume } from "../config/data-volume.js";
import { LdsError, fromSystemError } from "../errors.js";
import { setting } from "../hints.js";
import { ARCHIVE_FILES } from "../archive/manifest.js";
import type { StagedSnapshot } from "../archive/write-archive.js";
import { schemaVersion } from "../store/migrate.js";
import { keyMismatch } from "../store/key-match.js";
import { librariesOfSnapshot } from "../store/manifest-view.js";
import { canariesOf } from "./canaries.js";
import { copyDatabase } from "./copy-database.js";


/**
 * Copy the live databases and the key into `dir` while a server may keep writing, and describe the copy. The three
 * steps are separate so that a backup can hash each copied file on another thread while the next step runs
 * (ops/backup.ts); this runs them in order.
 */
export async function snapshotVolume(volume: DataVolume, dir: string): Promise<StagedSnapshot> {
  await copyVectorIndex(volume, dir);
  await copyDatabaseAndKey(volume, dir);
  return { dir, ...describeSnapshot(path.join(dir, ARCHIVE_FILES.db)) };
}

/**
 * The first step: check that the volume is whole, lay out `dir`, copy vectors.db. vectors.db's state is taken before
 * lds.db's: a snippet written between the two then lacks a vector (re-indexing fixes it) rather than the reverse.
 */
async function copyVectorIndex(volume: DataVolume, dir: string): Promise<void> {
  layOutSnapshot(volume, dir);
  await copyDatabase(volume.vectors, path.join(dir, ARCHIVE_FILES.vectors), true);
}

/** Check that the volume is whole and make the archive's folders in `dir`. */
export function layOutSnapshot(volume: DataVolume, dir: string): void {
  for (const [label, file] of [["database", volume.db], ["vector index", volume.vectors], ["key", volume.key]] as const) {
    if (!fs.existsSync(file)) {
      throw new LdsError("data_dir_invalid", `The ${label} ${file} does not exist: ${volume.root} is not an initialised data volume.`, {
        hint: `Check ${setting("dataDir")}; the server creates the volume on its first start.`,
      });
    }
  }
  for (const rel of Object.values(ARCHIVE_FILES)) fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true, mode: 0o700 });
}

/** The second step: copy lds.db and the key, and refuse a key that is not lds.db's. */
export async function copyDatabaseAndKey(volume: DataVolume, dir: string): Promise<void> {
  const target = (rel: string) => path.join(dir, rel);
  await copyDatabase(volume.db, target(ARCHIVE_FILES.db), false);
  try {
    fs.copyFileSync(volume.key, target(ARCHIVE_FILES.key));
    fs.chmodSync(target(ARCHIVE_FILES.key), 0o600);
  } catch (err) {
    throw fromSystemError(err, volume.key);
  }
  refuseForeignKey(target(ARCHIVE_FILES.db), target(ARCHIVE_FILES.key), volume);
}

/** An archive whose key does not belong to its database restores into a server that cannot start: never write one. */
function refuseForeignKey(dbFile: string, keyFile: string, volume: DataVolume): void {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const mismatch = keyMismatch(db, fs.readFileSync(keyFile));
    if (mismatch) {
      throw new LdsError("key_missing", `${volume.key} is not the key ${volume.db} was sealed with (${mismatch}); no archive was written.`, {
        hint: `Put back the secret.key that belongs to ${volume.db} (a pre-restore-* folder or an older archive holds it), then back up again.`,
      });
    }
  } finally {
    db.close();
  }
}

/** Read the manifest's view of the libraries from the snapshot itself, so it matches what the archive holds. */
export function describeSnapshot(dbFile: string): Omit<StagedSnapshot, "dir"> {
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

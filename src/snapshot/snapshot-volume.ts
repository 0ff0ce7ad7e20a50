import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { DataVolume } from "../config/data-volume.js";
import { LdsError, fromSystemError } from "../errors.js";
import { setting } from "../hints.js";
import { ARCHIVE_FILES } from "../archive/manifest.js";
import type { StagedSnapshot } from "../archive/write-archive.js";
import { schemaVersion } from "../store/migrate.js";
import { loadVectorExtension } from "../vectors/vector-index.js";
import { keyMismatch } from "../store/key-match.js";
import { librariesOfSnapshot } from "../store/manifest-view.js";
import { canariesOf } from "./canaries.js";


/**
 * Copy the live databases and the key into `dir` while a server may keep writing. VACUUM INTO reads one
 * consistent state in a single short read transaction without blocking writers (the stepwise backup API
 * restarts on every write and never finishes under load, DESIGN §6). vectors.db is copied first: a snippet
 * written between the two copies then lacks a vector (re-indexing fixes it) rather than the reverse.
 */
export function snapshotVolume(volume: DataVolume, dir: string): StagedSnapshot {
  for (const [label, file] of [["database", volume.db], ["vector index", volume.vectors], ["key", volume.key]] as const) {
    if (!fs.existsSync(file)) {
      throw new LdsError("data_dir_invalid", `The ${label} ${file} does not exist: ${volume.root} is not an initialised data volume.`, {
        hint: `Check ${setting("dataDir")}; the server creates the volume on its first start.`,
      });
    }
  }
  const target = (rel: string) => path.join(dir, rel);
  for (const rel of Object.values(ARCHIVE_FILES)) fs.mkdirSync(path.dirname(target(rel)), { recursive: true, mode: 0o700 });

  vacuumInto(volume.vectors, target(ARCHIVE_FILES.vectors), true);
  vacuumInto(volume.db, target(ARCHIVE_FILES.db), false);
  // Archived with the modes they have here: the databases hold credentials' seals, so 0600 like the key.
  fs.chmodSync(target(ARCHIVE_FILES.vectors), 0o600);
  fs.chmodSync(target(ARCHIVE_FILES.db), 0o600);
  try {
    fs.copyFileSync(volume.key, target(ARCHIVE_FILES.key));
    fs.chmodSync(target(ARCHIVE_FILES.key), 0o600);
  } catch (err) {
    throw fromSystemError(err, volume.key);
  }
  refuseForeignKey(target(ARCHIVE_FILES.db), target(ARCHIVE_FILES.key), volume);
  return { dir, ...describeSnapshot(target(ARCHIVE_FILES.db)) };
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

function vacuumInto(source: string, destination: string, needsVectorExtension: boolean): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true });
    db.pragma("busy_timeout = 10000");
    if (needsVectorExtension) loadVectorExtension(db);
    db.prepare("VACUUM INTO ?").run(destination);
  } catch (err) {
    if (err instanceof LdsError) throw err;
    throw fromSystemError(err, `the snapshot of ${source}`);
  } finally {
    db?.close();
  }
}

/** Read the manifest's view of the libraries from the snapshot itself, so it matches what the archive holds. */
export function describeSnapshot(dbFile: string): Omit<StagedSnapshot, "dir"> {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const version = schemaVersion(db);
    return { schemaVersion: version, ...librariesOfSnapshot(db), canaries: canariesOf(db) };
  } finally {
    db.close();
  }
}

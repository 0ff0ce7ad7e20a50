import type { DataVolume } from "../../config/data-volume.js";
import type { Engine, EngineWork } from "../engine.js";
import { lockPostgresBackups, postgresBackupLockHeld } from "./backup-lock.js";
import { SQLITE_FILE_NAMES } from "../sqlite/volume-files.js";
import { describeSnapshot } from "../sqlite/snapshot-volume.js";
import { checkPostgresWhole, snapshotPostgresRecords, snapshotPostgresVectors } from "./backup-snapshot.js";
import { notYetOnPostgres, refusalOnPostgres } from "./not-yet.js";
import { openPostgresDatabases } from "./open-postgres.js";
import { restoreIntoPostgres } from "./restore-records.js";
import { rotateSharedKey } from "./rotate-shared-key.js";
import { POSTGRES_SCHEMA_VERSION } from "../../store/postgres/schema.js";

/** Engine work PostgreSQL cannot do yet: refused with engine_unsupported when asked for anyway. */
const refused = (work: EngineWork, what: string) => (): never => {
  throw refusalOnPostgres(work, what);
};

/**
 * The PostgreSQL engine (issue 34): `open` gives the store over a shared database, the key every replica shares and,
 * for `lds serve`, the replica's search index (its files followed from the records); backups, archives of SQLite
 * files written from one snapshot of its rows (backup-snapshot.ts); an archive restored into a new schema swapped in
 * (restoreIntoRecords) and the shared key rotated (rotateSharedKey), both while no replica serves. Checking an
 * archive's files is the SQLite engine's work (archives hold SQLite files).
 */
export const postgresEngine: Engine = {
  name: "postgres",
  title: "PostgreSQL",
  latestSchemaVersion: POSTGRES_SCHEMA_VERSION,
  sharedByReplicas: true,
  notYet: (work, command) => notYetOnPostgres(work, command),
  // An archive carries SQLite's files (format 2): a PostgreSQL backup writes them from its rows.
  fileNames: SQLITE_FILE_NAMES,
  files: refused("restore", "the database files of a PostgreSQL volume"),
  liveFiles: refused("restore", "the live files of a PostgreSQL volume"),
  open: async (volume: DataVolume, options) => openPostgresDatabases(volume, options),
  // The server writes an ingestion inline on PostgreSQL (sharedByReplicas): the search files are the follower's.
  connect: refused("search", "the snippet writer thread"),
  lockBackups: (volume, purpose) => lockPostgresBackups(volume, purpose),
  backupLockHeld: (volume) => postgresBackupLockHeld(volume),
  checkWhole: (volume) => checkPostgresWhole(volume),
  snapshotVectors: (volume, target, options) => snapshotPostgresVectors(volume, target, options),
  snapshotRecords: (volume, target, pinned) => snapshotPostgresRecords(volume, target, pinned),
  // The records' copy is a SQLite file: described as a SQLite volume's copy is.
  describeSnapshot: async (records) => describeSnapshot(records),
  checkArchiveCopies: refused("restore", "lds verify"),
  checkSearchIndexCopy: refused("restore", "lds verify"),
  prepareRestored: refused("restore", "lds restore"),
  // Its records are a schema, not files: a restore imports the archive into a new one and swaps it in.
  restoreIntoRecords: (volume, copies, partial, options) => restoreIntoPostgres(volume, copies, partial, options),
  rotateSharedKey: (volume, currentKey) => rotateSharedKey(volume, currentKey),
  fullTextIndexName: "none yet",
  restoredView: refused("restore", "lds verify --restore-test"),
};

import { lockBackup } from "../../locks/volume-locks.js";
import type { Engine } from "../engine.js";
import { checkArchiveCopies } from "./check-snapshot.js";
import { copyDatabaseInThread } from "./copy-database-thread.js";
import { LATEST_SCHEMA_VERSION } from "./migrations.js";
import { connectDatabases, openDatabases } from "./open-databases.js";
import { prepareRestoredDatabases } from "./prepare-restored-db.js";
import { restoredView } from "./restored-view.js";
import { checkWhole, copyDatabaseAndKey, describeSnapshot } from "./snapshot-volume.js";
import { checkVirtualTablesInThread } from "./virtual-table-check.js";
import { SQLITE_FILE_NAMES, sqliteFiles, sqliteLiveFiles } from "./volume-files.js";

/**
 * The SQLite engine: binds each operation of the contract to the module that does it. Its work is synchronous
 * (better-sqlite3) and answers a resolved Promise; what takes seconds runs on threads of its own or, in the server,
 * through ops/heavy-work.ts.
 */
export const sqliteEngine: Engine = {
  name: "sqlite",
  title: "SQLite",
  // SQLite does every kind of engine work.
  notYet: () => undefined,
  latestSchemaVersion: LATEST_SCHEMA_VERSION,
  sharedByReplicas: false,
  fileNames: SQLITE_FILE_NAMES,
  files: sqliteFiles,
  liveFiles: sqliteLiveFiles,
  open: async (volume, options) => openDatabases(volume, options),
  connect: async (volume, key, embedder) => connectDatabases(volume, key, embedder),
  lockBackups: async (volume, purpose) => lockBackup(volume, purpose),
  checkWhole: async (volume) => checkWhole(volume),
  snapshotVectors: (volume, target, options) =>
    copyDatabaseInThread(sqliteFiles(volume).vectors, target, { needsVectorExtension: true, yieldToRequests: options.yieldToRequests, onPinned: () => options.onPinned() }),
  snapshotRecords: (volume, target) => copyDatabaseAndKey(volume, target),
  describeSnapshot: async (records) => describeSnapshot(records),
  checkArchiveCopies: async (copies, options) => checkArchiveCopies(copies, options),
  checkSearchIndexCopy: (records, options) => checkVirtualTablesInThread(records.file, records.name, options),
  prepareRestored: async (copies, partial) => prepareRestoredDatabases(copies.records, copies.vectors, partial),
  fullTextIndexName: "FTS5",
  restoredView,
};

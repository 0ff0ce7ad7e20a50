import type { DataVolume } from "../../config/data-volume.js";
import type { Engine, EngineWork } from "../engine.js";
import { lockPostgresBackups } from "./backup-lock.js";
import { notYetOnPostgres, refusalOnPostgres } from "./not-yet.js";
import { openPostgresDatabases } from "./open-postgres.js";
import { POSTGRES_SCHEMA_VERSION } from "../../store/postgres/schema.js";

/** Engine work PostgreSQL cannot do yet: refused with engine_unsupported when asked for anyway. */
const refused = (work: EngineWork, what: string) => (): never => {
  throw refusalOnPostgres(work, what);
};

/**
 * The PostgreSQL engine (issue 34): `open` gives the store over a shared database, the key every replica shares and,
 * for `lds serve`, the replica's search index (its files followed from the records). It has no file of its own to
 * snapshot, check or restore yet: those kinds of work are refused up front (`notYet`) and, if reached anyway, here.
 */
export const postgresEngine: Engine = {
  name: "postgres",
  title: "PostgreSQL",
  latestSchemaVersion: POSTGRES_SCHEMA_VERSION,
  sharedByReplicas: true,
  notYet: (work, command) => notYetOnPostgres(work, command),
  // Archives carry SQLite's files (formats 1 and 2); a PostgreSQL backup will write them too (issue 34).
  get fileNames(): never {
    return refused("snapshot", "archive files of a PostgreSQL volume")();
  },
  files: refused("snapshot", "the database files of a PostgreSQL volume"),
  liveFiles: refused("restore", "the live files of a PostgreSQL volume"),
  open: async (volume: DataVolume, options) => openPostgresDatabases(volume, options),
  // The server writes an ingestion inline on PostgreSQL (sharedByReplicas): the search files are the follower's.
  connect: refused("search", "the snippet writer thread"),
  lockBackups: (volume, purpose) => lockPostgresBackups(volume, purpose),
  checkWhole: refused("snapshot", "lds backup"),
  snapshotVectors: refused("snapshot", "lds backup"),
  snapshotRecords: refused("snapshot", "lds backup"),
  describeSnapshot: refused("snapshot", "lds backup"),
  checkArchiveCopies: refused("restore", "lds verify"),
  checkSearchIndexCopy: refused("restore", "lds verify"),
  prepareRestored: refused("restore", "lds restore"),
  fullTextIndexName: "none yet",
  restoredView: refused("restore", "lds verify --restore-test"),
};

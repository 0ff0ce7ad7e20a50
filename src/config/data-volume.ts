import path from "node:path";
import { SQLITE_DATABASE, type DatabaseSettings } from "./database-settings.js";

/** Where every file of the data volume lives (docs/data-volume.md describes each one). */
export interface DataVolume {
  root: string;
  /**
   * The database engine that serves the volume (engine/choose-engine.ts) and its settings, parsed once from the
   * environment (config/database-settings.ts): SQLite's files are the engine's to name (`Engine.files`); PostgreSQL's
   * records are in its database, and this directory keeps the replica's own files (locks, users).
   */
  engine: DatabaseSettings;
  key: string;
  /** A new key being put in place by a key rotation (ops/rotate-key.ts); finished or dropped when the volume opens. */
  keyNext: string;
  serverLock: string;
  backupLock: string;
  backups: string;
  restoreStaged: string;
  restoreJournal: string;
  /** One record per command that has the volume open (locks/volume-users.ts). */
  users: string;
}

export const DEFAULT_DATA_DIR = "./data";

/** Resolve the data directory: the flag wins over LDS_DATA_DIR (from the shell's environment), which wins over ./data. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return path.resolve(flag || env.LDS_DATA_DIR || DEFAULT_DATA_DIR);
}

/** The engine of a volume whose settings name none (no LDS_DATABASE_URL). */
export const DEFAULT_ENGINE = SQLITE_DATABASE.name;

export function dataVolume(root: string, engine: DatabaseSettings = SQLITE_DATABASE): DataVolume {
  const at = (name: string) => path.join(root, name);
  return {
    root,
    engine,
    key: at("secret.key"),
    keyNext: at("secret.key.new"),
    serverLock: at("server.lock"),
    backupLock: at("backup.lock"),
    backups: at("backups"),
    restoreStaged: at("restore-staged"),
    restoreJournal: at("restore-journal.json"),
    users: at("volume-users"),
  };
}

/** A UTC timestamp that sorts by time and is safe in file names: 20261121T151441Z. */
export function fileTimestamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

import type Database from "better-sqlite3";

/** The schema version recorded in the database (0 for a new, empty one): SQLite's user_version. */
export function schemaVersion(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

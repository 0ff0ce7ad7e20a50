import type Database from "better-sqlite3";
import { sqliteDatabaseOf } from "../../src/engine/sqlite/open-databases.js";
import type { OpenVolume } from "../../src/volume/open-volume.js";

/** The lds.db connection of a volume the SQLite engine opened: tests that write or read rows directly use it. */
export function dbOf(volume: Pick<OpenVolume, "store">): Database.Database {
  return sqliteDatabaseOf(volume.store);
}

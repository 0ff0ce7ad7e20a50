import type Database from "better-sqlite3";
import { LdsError } from "../../errors.js";
import { schemaVersion } from "../../store/sqlite/schema-version.js";
import { MIGRATIONS, type Migration } from "./migrations.js";

export { schemaVersion };

/**
 * Bring the database up to `target` (default: the newest migration), each migration in its own transaction
 * together with its record, so a crash leaves the database at a whole version. Refuses a database that is newer
 * than this code: opening it could corrupt data the newer release relies on.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS, target = migrations[migrations.length - 1]!.version): { from: number; to: number } {
  const latest = migrations[migrations.length - 1]!.version;
  const from = schemaVersion(db);
  if (from > latest) {
    throw new LdsError("schema_too_new", `The database ${db.name} has schema version ${from}, but this LDS only knows up to ${latest}.`, {
      hint: "Upgrade LDS to the release that wrote this database (or restore an older backup).",
    });
  }
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))`);
  const record = db.prepare("INSERT INTO schema_migrations (version, name) VALUES (?, ?)");
  for (const migration of migrations) {
    if (migration.version <= from || migration.version > target) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.version, migration.name);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
  return { from, to: Math.max(from, Math.min(target, latest)) };
}

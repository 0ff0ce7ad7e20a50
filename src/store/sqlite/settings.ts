import type Database from "better-sqlite3";

export function getSetting(db: Database.Database, key: string): string | undefined {
  return db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(key) as string | undefined;
}

/** One statement each, in one connection's order: SQLite serialises writers, so the first insert wins. */
export function putSettingIfAbsent(db: Database.Database, key: string, value: string): string {
  db.prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING").run(key, value);
  return getSetting(db, key)!;
}

/** Keys compare as BINARY (SQLite's default): code point order for UTF-8. Every key in the range starts with `prefix`. */
export function pruneSettingsBefore(db: Database.Database, prefix: string, before: string): number {
  return db.prepare("DELETE FROM settings WHERE key >= ? AND key < ?").run(prefix, prefix + before).changes;
}

export function setSetting(db: Database.Database, key: string, value: string): void {
  db.prepare(
    `INSERT INTO settings (key, value) VALUES (?, ?)
     ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')`,
  ).run(key, value);
}

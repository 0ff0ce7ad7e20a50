import type Database from "better-sqlite3";

export function getSetting(db: Database.Database, key: string): string | undefined {
  return db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(key) as string | undefined;
}

export function setSetting(db: Database.Database, key: string, value: string): void {
  db.prepare(
    `INSERT INTO settings (key, value) VALUES (?, ?)
     ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')`,
  ).run(key, value);
}

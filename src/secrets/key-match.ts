import type Database from "better-sqlite3";
import { keyFingerprint } from "./key-file.js";
import { unseal } from "./seal.js";

/** Where lds.db records the fingerprint of the key it was sealed with (settings table). */
export const FINGERPRINT_SETTING = "secret_key.fingerprint";

/**
 * Whether `key` is the key `db` was sealed with: its recorded fingerprint when there is one (every volume opened
 * by 0.2 or later), else by unsealing one stored secret (a name is its own authenticated context). A database with
 * neither has nothing sealed and accepts any key. Returns why not, or null when it matches.
 */
export function keyMismatch(db: Database.Database, key: Buffer): string | null {
  const hasSettings = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings'").get();
  const recorded = hasSettings ? (db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(FINGERPRINT_SETTING) as string | undefined) : undefined;
  if (recorded !== undefined) return recorded === keyFingerprint(key) ? null : "its fingerprint is not the one the database records";
  const hasSecrets = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'secrets'").get();
  const sample = hasSecrets ? (db.prepare("SELECT name, sealed FROM secrets LIMIT 1").get() as { name: string; sealed: string } | undefined) : undefined;
  if (!sample) return null;
  try {
    unseal(key, sample.sealed, sample.name);
    return null;
  } catch {
    return "it does not unseal the secrets the database holds";
  }
}

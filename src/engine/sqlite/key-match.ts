import Database from "better-sqlite3";
import { keyFingerprint } from "../../secrets/key-file.js";
import { unseal } from "../../secrets/seal.js";
import { FINGERPRINT_SETTING } from "../../store/sqlite/secrets-table.js";
import { getSetting } from "../../store/sqlite/settings.js";

export { FINGERPRINT_SETTING };

/**
 * Whether `key` is the key `db` (a live database or an archive's copy) was sealed with: its recorded fingerprint
 * when there is one (every volume opened by 0.2 or later), else by unsealing one stored secret (a name is its own
 * authenticated context). A database with neither has nothing sealed and accepts any key. Returns why not, or
 * null when it matches. Every schema has the settings and secrets tables (migration 1).
 */
export function keyMismatch(db: Database.Database, key: Buffer): string | null {
  const recorded = getSetting(db, FINGERPRINT_SETTING);
  if (recorded !== undefined) return recorded === keyFingerprint(key) ? null : "its fingerprint is not the one the database records";
  const sample = db.prepare("SELECT name, sealed FROM secrets LIMIT 1").get() as { name: string; sealed: string } | undefined;
  if (!sample) return null;
  try {
    unseal(key, sample.sealed, sample.name);
    return null;
  } catch {
    return "it does not unseal the secrets the database holds";
  }
}

/** keyMismatch of a records file (a copy made for an archive), opened read-only for the question. */
export function keyMismatchOfFile(file: string, key: Buffer): string | null {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return keyMismatch(db, key);
  } finally {
    db.close();
  }
}

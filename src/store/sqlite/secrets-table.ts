import type Database from "better-sqlite3";
import { seal, unseal } from "../../secrets/seal.js";
import { setSetting } from "./settings.js";

/** Where lds.db records the fingerprint of the key it was sealed with (settings table). */
export const FINGERPRINT_SETTING = "secret_key.fingerprint";

/** Sealed secrets by name. The name is bound into the seal, so a value cannot be moved to another name. */
export function putSecret(db: Database.Database, key: Buffer, name: string, value: string): void {
  db.prepare(
    `INSERT INTO secrets (name, sealed) VALUES (?, ?)
     ON CONFLICT(name) DO UPDATE SET sealed = excluded.sealed, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')`,
  ).run(name, seal(key, value, name));
}

export function getSecret(db: Database.Database, key: Buffer, name: string): string | undefined {
  const sealed = db.prepare("SELECT sealed FROM secrets WHERE name = ?").pluck().get(name) as string | undefined;
  return sealed === undefined ? undefined : unseal(key, sealed, name);
}

export function hasSecret(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM secrets WHERE name = ?").get(name) !== undefined;
}

export function countSecrets(db: Database.Database): number {
  return db.prepare("SELECT count(*) FROM secrets").pluck().get() as number;
}

export function deleteSecret(db: Database.Database, name: string): void {
  db.prepare("DELETE FROM secrets WHERE name = ?").run(name);
}

/**
 * Re-seal every stored secret with `newKey` and record its fingerprint, in one transaction written with
 * synchronous=FULL (durable before the caller puts the new key file in place): the database is sealed wholly with
 * the old key or wholly with the new one. Returns how many secrets were re-sealed.
 */
export function resealSecrets(db: Database.Database, oldKey: Buffer, newKey: Buffer, newFingerprint: string): number {
  const rows = db.prepare("SELECT name, sealed FROM secrets").all() as Array<{ name: string; sealed: string }>;
  const update = db.prepare("UPDATE secrets SET sealed = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE name = ?");
  const previous = db.pragma("synchronous", { simple: true });
  db.pragma("synchronous = FULL");
  try {
    db.transaction(() => {
      // Every secret is unsealed first: one that fails (tampered) aborts the rotation before anything changes.
      for (const row of rows) update.run(seal(newKey, unseal(oldKey, row.sealed, row.name), row.name), row.name);
      setSetting(db, FINGERPRINT_SETTING, newFingerprint);
    }).immediate();
  } finally {
    db.pragma(`synchronous = ${previous}`);
  }
  return rows.length;
}

/**
 * A setting and the secrets that go with it, all or nothing: each secret given is sealed, an empty one removed, an
 * absent (undefined) one left as it is.
 */
export function saveSettingWithSecrets(db: Database.Database, key: Buffer, setting: string, value: string, secrets: Array<{ name: string; value: string | undefined }>): void {
  db.transaction(() => {
    setSetting(db, setting, value);
    for (const secret of secrets) {
      if (secret.value === undefined) continue;
      if (secret.value === "") deleteSecret(db, secret.name);
      else putSecret(db, key, secret.name, secret.value);
    }
  }).immediate();
}

/** Every sealed secret as stored (name and seal), for checks that each one unseals. */
export function sealedSecrets(db: Database.Database): Array<{ name: string; sealed: string }> {
  return db.prepare("SELECT name, sealed FROM secrets ORDER BY name").all() as Array<{ name: string; sealed: string }>;
}

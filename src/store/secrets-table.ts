import type Database from "better-sqlite3";
import { seal, unseal } from "../secrets/seal.js";
import { setSetting } from "./settings.js";

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
  })();
}

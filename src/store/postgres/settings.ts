import { LdsError } from "../../errors.js";
import { setting } from "../../hints.js";
import { keyFingerprint } from "../../secrets/key-file.js";
import { seal, unseal } from "../../secrets/seal.js";
import type { SettingStore } from "../store.js";
import { NOW_TEXT } from "./schema-text.js";
import type { PgContext, Sql } from "./sql.js";

/** Where the records keep the fingerprint of the key the secrets are sealed with (as lds.db does). */
export const FINGERPRINT_SETTING = "secret_key.fingerprint";

export async function getSetting(sql: Sql, key: string): Promise<string | undefined> {
  return (await sql.row<{ value: string }>("SELECT value FROM settings WHERE key = $1", [key]))?.value;
}

export async function setSetting(sql: Sql, key: string, value: string): Promise<void> {
  await sql.run(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = ${NOW_TEXT}`, [key, value]);
}

/**
 * Two statements, not one: under READ COMMITTED an insert that waited for a concurrent one to commit does nothing,
 * and a SELECT in the same statement would still read the snapshot taken before that commit (no row). The second
 * statement takes a new snapshot and sees the winner's value.
 */
export async function putSettingIfAbsent(sql: Sql, key: string, value: string): Promise<string> {
  await sql.run("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [key, value]);
  return (await getSetting(sql, key))!;
}

/** COLLATE "C": code point order whatever the database's collation (a locale's would sort punctuation apart). */
export async function pruneSettingsBefore(sql: Sql, prefix: string, before: string): Promise<number> {
  return sql.run(`DELETE FROM settings WHERE key COLLATE "C" >= $1 AND key COLLATE "C" < $2`, [prefix, prefix + before]);
}

export async function deleteSetting(sql: Sql, key: string): Promise<void> {
  await sql.run("DELETE FROM settings WHERE key = $1", [key]);
}

/**
 * Sealed secrets by name, sealed as the SQLite engine seals them: the name is bound into the seal. `sql` is a
 * transaction: the recorded key fingerprint is read FOR SHARE first, so a rotation (which locks it FOR UPDATE before
 * it reads the secrets) either re-seals this one after it commits or has committed, and then this writer's key is
 * no longer the database's: key_missing, nothing written (a secret sealed with the old key could never be read).
 */
export async function putSecret(sql: Sql, key: Buffer, name: string, value: string): Promise<void> {
  const recorded = await sql.row<{ value: string }>("SELECT value FROM settings WHERE key = $1 FOR SHARE", [FINGERPRINT_SETTING]);
  if (recorded && recorded.value !== keyFingerprint(key)) {
    throw new LdsError("key_missing", `The key this process seals secrets with is no longer the database's (it was rotated or the records restored since this process opened them): ${name} was not written.`, {
      hint: `Start it again with the key file the database uses now (${setting("secretKeyFile")}), then try again.`,
    });
  }
  await sql.run(`INSERT INTO secrets (name, sealed) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = ${NOW_TEXT}`, [name, seal(key, value, name)]);
}

export async function getSecret(sql: Sql, key: Buffer, name: string): Promise<string | undefined> {
  const row = await sql.row<{ sealed: string }>("SELECT sealed FROM secrets WHERE name = $1", [name]);
  return row && unseal(key, row.sealed, name);
}

export async function deleteSecret(sql: Sql, name: string): Promise<void> {
  await sql.run("DELETE FROM secrets WHERE name = $1", [name]);
}

/**
 * Within `tx`: every secret unsealed with `oldKey` and sealed with `newKey`, and the new key's fingerprint recorded.
 * One that fails to unseal (tampered) throws, and the transaction changes nothing. Answers the secrets re-sealed.
 */
export async function resealEverySecret(tx: Sql, oldKey: Buffer, newKey: Buffer, newFingerprint: string): Promise<number> {
  // The fingerprint first: a writer holding it FOR SHARE commits before the secrets are read (its secret is re-sealed
  // here), and one that comes later waits, then finds the new fingerprint (putSecret).
  await tx.run("SELECT value FROM settings WHERE key = $1 FOR UPDATE", [FINGERPRINT_SETTING]);
  const rows = await tx.rows<{ name: string; sealed: string }>("SELECT name, sealed FROM secrets ORDER BY name FOR UPDATE");
  for (const row of rows) await tx.run(`UPDATE secrets SET sealed = $1, updated_at = ${NOW_TEXT} WHERE name = $2`, [seal(newKey, unseal(oldKey, row.sealed, row.name), row.name), row.name]);
  await setSetting(tx, FINGERPRINT_SETTING, newFingerprint);
  return rows.length;
}

export function settingStore({ sql, transaction, key }: PgContext): SettingStore {
  return {
    get: (name) => getSetting(sql, name),
    set: (name, value) => setSetting(sql, name, value),
    putIfAbsent: (name, value) => putSettingIfAbsent(sql, name, value),
    pruneBefore: (prefix, before) => pruneSettingsBefore(sql, prefix, before),
    secret: (name) => getSecret(sql, key, name),
    hasSecret: async (name) => (await sql.row("SELECT 1 FROM secrets WHERE name = $1", [name])) !== undefined,
    // A setting and its secrets, all or nothing: a secret given is sealed, "" removes it, undefined keeps it.
    saveWithSecrets: (setting, value, secrets) =>
      transaction(async (tx) => {
        await setSetting(tx, setting, value);
        for (const secret of secrets) {
          if (secret.value === undefined) continue;
          if (secret.value === "") await deleteSecret(tx, secret.name);
          else await putSecret(tx, key, secret.name, secret.value);
        }
      }),
    // Every secret unsealed with the old key and sealed with the new one, and the new fingerprint, in one transaction:
    // one that fails to unseal (tampered) aborts the rotation before anything changes. Committed means durable here
    // (synchronous_commit is the server's, on by default), which SQLite needed a pragma for.
    resealSecrets: (newKey, newFingerprint) => transaction((tx) => resealEverySecret(tx, key, newKey, newFingerprint)),
  };
}

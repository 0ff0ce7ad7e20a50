import { bearerKey, callerOfKey, mintApiKey, noActiveKey, type KeyRow } from "../api-key-secret.js";
import type { ApiKeyListing, Caller, NewApiKey } from "../records.js";
import { NOW_TEXT } from "./schema-text.js";
import type { Sql } from "./sql.js";

// The key format, digest and comparison are store/api-key-secret.ts's, the SQLite engine's as well: a key made by
// one engine works on the other after a cross-restore.

/** A new key: shown once; only its public prefix and the SHA-256 of its secret (hex) are stored. */
export async function createApiKey(sql: Sql, userId: number, name: string | null): Promise<NewApiKey> {
  const { key, prefix, keyHash } = mintApiKey();
  await sql.run("INSERT INTO api_keys (user_id, prefix, key_hash, name) VALUES ($1, $2, $3, $4)", [userId, prefix, keyHash, name]);
  return { key, prefix };
}

/** The caller a bearer key belongs to; `invalid_api_key` for a missing, malformed, unknown or revoked key. */
export async function authenticate(sql: Sql, authorization: string | undefined): Promise<Caller> {
  const { prefix, secret } = bearerKey(authorization);
  const row = await sql.row<KeyRow>(
    `SELECT k.prefix, k.key_hash, k.revoked_at, u.id AS user_id, u.email, u.role, u.removed_at, t.id AS team_id, t.plan
     FROM api_keys k JOIN users u ON u.id = k.user_id JOIN teams t ON t.id = u.team_id WHERE k.prefix = $1`,
    [prefix],
  );
  return callerOfKey(secret, row);
}

/** Whether any key still works: a new installation has none (the server then says how to make one). */
export async function hasActiveApiKey(sql: Sql): Promise<boolean> {
  return (await sql.row("SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1")) !== undefined;
}

export async function revokeApiKey(sql: Sql, prefix: string): Promise<void> {
  const changed = await sql.run(`UPDATE api_keys SET revoked_at = ${NOW_TEXT} WHERE prefix = $1 AND revoked_at IS NULL`, [prefix]);
  if (changed === 0) throw noActiveKey(prefix);
}

/** Every key with its user's email, oldest first (ties in the order they were made), never its digest. */
export async function listApiKeys(sql: Sql): Promise<ApiKeyListing[]> {
  return sql.rows<ApiKeyListing>(
    `SELECT k.prefix, k.name, u.email, k.created_at AS "createdAt", k.revoked_at AS "revokedAt"
     FROM api_keys k JOIN users u ON u.id = k.user_id ORDER BY k.created_at COLLATE "C", k.id`,
  );
}

import type Database from "better-sqlite3";
import { bearerKey, callerOfKey, mintApiKey, noActiveKey, type KeyRow } from "../api-key-secret.js";
import type { ApiKeyListing, Caller, NewApiKey } from "../records.js";

/** A new key: shown once; only its public prefix and the SHA-256 of its secret are stored (store/api-key-secret.ts). */
export function createApiKey(db: Database.Database, userId: number, name: string | null): NewApiKey {
  const { key, prefix, keyHash } = mintApiKey();
  db.prepare("INSERT INTO api_keys (user_id, prefix, key_hash, name) VALUES (?, ?, ?, ?)").run(userId, prefix, keyHash, name);
  return { key, prefix };
}

/** The caller a bearer key belongs to; `invalid_api_key` for a missing, malformed, unknown or revoked key. */
export function authenticate(db: Database.Database, authorization: string | undefined): Caller {
  const { prefix, secret } = bearerKey(authorization);
  const row = db
    .prepare(
      `SELECT k.prefix, k.key_hash, k.revoked_at, u.id AS user_id, u.email, u.role, u.removed_at, t.id AS team_id, t.plan
       FROM api_keys k JOIN users u ON u.id = k.user_id JOIN teams t ON t.id = u.team_id WHERE k.prefix = ?`,
    )
    .get(prefix) as KeyRow | undefined;
  return callerOfKey(secret, row);
}

/** Whether any key still works: a new installation has none (the server then says how to make one). */
export function hasActiveApiKey(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1").get() !== undefined;
}

export function revokeApiKey(db: Database.Database, prefix: string): void {
  const changes = db.prepare("UPDATE api_keys SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE prefix = ? AND revoked_at IS NULL").run(prefix).changes;
  if (changes === 0) throw noActiveKey(prefix);
}

export function listApiKeys(db: Database.Database): ApiKeyListing[] {
  return db
    .prepare(
      `SELECT k.prefix, k.name, u.email, k.created_at AS createdAt, k.revoked_at AS revokedAt
       FROM api_keys k JOIN users u ON u.id = k.user_id ORDER BY k.created_at`,
    )
    .all() as ApiKeyListing[];
}

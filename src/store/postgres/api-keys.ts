import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { LdsError } from "../../errors.js";
import { action } from "../../hints.js";
import type { ApiKeyListing, Caller, NewApiKey, Plan, Role } from "../records.js";
import { NOW_TEXT } from "./schema-text.js";
import type { Sql } from "./sql.js";

// The key format and digest are store/sqlite/api-keys.ts's, so that a key made by one engine works on the other
// after a cross-restore: a fixed vendor prefix, 12 hex digits of public id, 43 characters of secret.
const KEY_PREFIX = "ldssk-";
const KEY_FORMAT = /^ldssk-([0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

const digest = (secret: string) => createHash("sha256").update(secret).digest();

/** A new key: shown once; only its public prefix and the SHA-256 of its secret (hex) are stored. */
export async function createApiKey(sql: Sql, userId: number, name: string | null): Promise<NewApiKey> {
  const prefix = `${KEY_PREFIX}${randomBytes(6).toString("hex")}`;
  const secret = randomBytes(32).toString("base64url");
  await sql.run("INSERT INTO api_keys (user_id, prefix, key_hash, name) VALUES ($1, $2, $3, $4)", [userId, prefix, digest(secret).toString("hex"), name]);
  return { key: `${prefix}.${secret}`, prefix };
}

interface KeyRow {
  prefix: string;
  key_hash: string;
  revoked_at: string | null;
  user_id: number;
  email: string;
  role: Role;
  removed_at: string | null;
  team_id: number;
  plan: Plan;
}

/** The caller a bearer key belongs to; `invalid_api_key` for a missing, malformed, unknown or revoked key. */
export async function authenticate(sql: Sql, authorization: string | undefined): Promise<Caller> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (!match) throw invalid(authorization ? "The Authorization header is not `Bearer <API key>`." : "An API key is required: send `Authorization: Bearer <API key>`.");
  const parts = KEY_FORMAT.exec(match[1]!);
  if (!parts) throw invalid(`API keys start with ${KEY_PREFIX}; this one is malformed.`);
  const row = await sql.row<KeyRow>(
    `SELECT k.prefix, k.key_hash, k.revoked_at, u.id AS user_id, u.email, u.role, u.removed_at, t.id AS team_id, t.plan
     FROM api_keys k JOIN users u ON u.id = k.user_id JOIN teams t ON t.id = u.team_id WHERE k.prefix = $1`,
    [`${KEY_PREFIX}${parts[1]}`],
  );
  // Compare even when the prefix is unknown, so that timing does not tell which prefixes exist.
  const expected = row ? Buffer.from(row.key_hash, "hex") : Buffer.alloc(32);
  const matches = timingSafeEqual(digest(parts[2]!), expected);
  if (!row || !matches || row.revoked_at) throw invalid("The API key is unknown or was revoked.");
  // Only a caller holding the key's secret gets this far, so naming its own user reveals nothing.
  if (row.removed_at) {
    throw new LdsError("user_not_found", `The user of this API key (${row.email}) was removed from its team.`, {
      hint: `Ask an operator to add you again (${action("user.add")}), or use a key of another user.`,
    });
  }
  return { keyPrefix: row.prefix, userId: row.user_id, email: row.email, role: row.role, teamId: row.team_id, plan: row.plan };
}

/** Whether any key still works: a new installation has none (the server then says how to make one). */
export async function hasActiveApiKey(sql: Sql): Promise<boolean> {
  return (await sql.row("SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1")) !== undefined;
}

export async function revokeApiKey(sql: Sql, prefix: string): Promise<void> {
  const changed = await sql.run(`UPDATE api_keys SET revoked_at = ${NOW_TEXT} WHERE prefix = $1 AND revoked_at IS NULL`, [prefix]);
  if (changed === 0) throw new LdsError("validation_error", `No active key ${prefix}.`, { hint: `List keys: ${action("key.list")}.` });
}

/** Every key with its user's email, oldest first (ties in the order they were made), never its digest. */
export async function listApiKeys(sql: Sql): Promise<ApiKeyListing[]> {
  return sql.rows<ApiKeyListing>(
    `SELECT k.prefix, k.name, u.email, k.created_at AS "createdAt", k.revoked_at AS "revokedAt"
     FROM api_keys k JOIN users u ON u.id = k.user_id ORDER BY k.created_at COLLATE "C", k.id`,
  );
}

function invalid(message: string): LdsError {
  return new LdsError("invalid_api_key", message, { hint: `Create a key: ${action("key.create")}.` });
}

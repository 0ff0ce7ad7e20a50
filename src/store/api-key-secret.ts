import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { LdsError } from "../errors.js";
import { action } from "../hints.js";
import type { Caller, Plan, Role } from "./records.js";

/**
 * API keys as every engine makes and checks them, so that a key made by one works on the other after a
 * cross-restore: a fixed vendor prefix (spec), 12 hex digits of public id, 43 characters of secret; only the public
 * prefix and the SHA-256 of the secret (hex) are stored, and the secret is compared in constant time.
 */
const KEY_PREFIX = "ldssk-";
const KEY_FORMAT = /^ldssk-([0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

const digest = (secret: string) => createHash("sha256").update(secret).digest();

/** A new key: `key` is shown once; `prefix` and `keyHash` are what is stored. */
export function mintApiKey(): { key: string; prefix: string; keyHash: string } {
  const prefix = `${KEY_PREFIX}${randomBytes(6).toString("hex")}`;
  const secret = randomBytes(32).toString("base64url");
  return { key: `${prefix}.${secret}`, prefix, keyHash: digest(secret).toString("hex") };
}

/** The key an `Authorization` header carries: its stored prefix (to look up) and its secret; invalid_api_key otherwise. */
export function bearerKey(authorization: string | undefined): { prefix: string; secret: string } {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (!match) throw invalid(authorization ? "The Authorization header is not `Bearer <API key>`." : "An API key is required: send `Authorization: Bearer <API key>`.");
  const parts = KEY_FORMAT.exec(match[1]!);
  if (!parts) throw invalid(`API keys start with ${KEY_PREFIX}; this one is malformed.`);
  return { prefix: `${KEY_PREFIX}${parts[1]}`, secret: parts[2]! };
}

/** A key's row with its user and team, as both engines read it (the schema's column names). */
export interface KeyRow {
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

/** The caller of a key whose prefix found `row` (undefined: none); invalid_api_key unless its secret matches and it is live. */
export function callerOfKey(secret: string, row: KeyRow | undefined): Caller {
  // Compare even when the prefix is unknown, so that timing does not tell which prefixes exist.
  const expected = row ? Buffer.from(row.key_hash, "hex") : Buffer.alloc(32);
  const matches = timingSafeEqual(digest(secret), expected);
  if (!row || !matches || row.revoked_at) throw invalid("The API key is unknown or was revoked.");
  // Only a caller holding the key's secret gets this far, so naming its own user reveals nothing.
  if (row.removed_at) {
    throw new LdsError("user_not_found", `The user of this API key (${row.email}) was removed from its team.`, {
      hint: `Ask an operator to add you again (${action("user.add")}), or use a key of another user.`,
    });
  }
  return { keyPrefix: row.prefix, userId: row.user_id, email: row.email, role: row.role, teamId: row.team_id, plan: row.plan };
}

/** No active key with this prefix (revoking). */
export function noActiveKey(prefix: string): LdsError {
  return new LdsError("validation_error", `No active key ${prefix}.`, { hint: `List keys: ${action("key.list")}.` });
}

function invalid(message: string): LdsError {
  return new LdsError("invalid_api_key", message, { hint: `Create a key: ${action("key.create")}.` });
}

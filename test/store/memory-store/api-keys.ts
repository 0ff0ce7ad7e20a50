import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { LdsError } from "../../../src/errors.js";
import type { ApiKeyStore } from "../../../src/store/store.js";
import type { NewApiKey } from "../../../src/store/records.js";
import { now, type MemoryTables } from "./tables.js";

const KEY_FORMAT = /^ldssk-([0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;
const digest = (secret: string) => createHash("sha256").update(secret).digest();

/** A new key: shown once; only its prefix and the SHA-256 of its secret are kept. */
export function createApiKey(tables: MemoryTables, userId: number, name: string | null): NewApiKey {
  const prefix = `ldssk-${randomBytes(6).toString("hex")}`;
  const secret = randomBytes(32).toString("base64url");
  tables.apiKeys.set(prefix, { prefix, userId, digest: digest(secret), name, createdAt: now(), revokedAt: null });
  return { key: `${prefix}.${secret}`, prefix };
}

export function apiKeyStore(tables: MemoryTables): ApiKeyStore {
  return {
    create: async (userId, name) => createApiKey(tables, userId, name),
    authenticate: async (authorization) => {
      const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
      if (!bearer) throw invalid("An API key is required: send `Authorization: Bearer <API key>`.");
      const parts = KEY_FORMAT.exec(bearer[1]!);
      if (!parts) throw invalid("API keys start with ldssk-; this one is malformed.");
      const record = tables.apiKeys.get(`ldssk-${parts[1]}`);
      // Compared even for an unknown prefix, so that timing does not tell which prefixes exist.
      const matches = timingSafeEqual(digest(parts[2]!), record?.digest ?? Buffer.alloc(32));
      if (!record || !matches || record.revokedAt) throw invalid("The API key is unknown or was revoked.");
      const user = tables.users.get(record.userId)!;
      if (user.removed) throw new LdsError("user_not_found", `The user of this API key (${user.email}) was removed from its team.`);
      const team = tables.teams.get(user.teamId)!;
      return { keyPrefix: record.prefix, userId: user.id, email: user.email, role: user.role, teamId: team.id, plan: team.plan };
    },
    hasActive: async () => [...tables.apiKeys.values()].some((k) => k.revokedAt === null),
    revoke: async (prefix) => {
      const record = tables.apiKeys.get(prefix);
      if (!record || record.revokedAt) throw new LdsError("validation_error", `No active key ${prefix}.`);
      record.revokedAt = now();
    },
    list: async () => [...tables.apiKeys.values()].map((k) => ({ prefix: k.prefix, name: k.name, email: tables.users.get(k.userId)!.email, createdAt: k.createdAt, revokedAt: k.revokedAt })),
  };
}

const invalid = (message: string) => new LdsError("invalid_api_key", message);

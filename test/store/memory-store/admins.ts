import { createHash, randomBytes } from "node:crypto";
import { LdsError } from "../../../src/errors.js";
import type { AdminStore } from "../../../src/store/store.js";
import { copy, nextId, type MemoryTables } from "./tables.js";

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

export function adminStore(tables: MemoryTables): AdminStore {
  const store: AdminStore = {
    find: async (username) => copy([...tables.admins.values()].find((a) => a.username === username)),
    count: async () => tables.admins.size,
    createFirst: async (username, passwordHash) => (tables.admins.size === 0 ? store.create(username, passwordHash) : undefined),
    create: async (username, passwordHash) => {
      if (!/^[A-Za-z0-9._@-]{1,64}$/.test(username)) throw new LdsError("validation_error", "A username is 1-64 letters, digits, dots, dashes, underscores or @.");
      if ([...tables.admins.values()].some((a) => a.username === username)) throw new LdsError("validation_error", `An admin named ${username} already exists.`);
      const id = nextId(tables, "admins");
      tables.admins.set(id, { id, username, passwordHash });
      return id;
    },
    createSession: async (adminId, ttlSeconds) => {
      const token = randomBytes(32).toString("base64url");
      const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
      for (const [hash, s] of tables.sessions) if (s.expiresAt < Date.now()) tables.sessions.delete(hash);
      tables.sessions.set(hashToken(token), { adminId, expiresAt: expiresAt.getTime() });
      return { token, expiresAt };
    },
    sessionAdmin: async (token) => {
      const session = tables.sessions.get(hashToken(token));
      const admin = session && session.expiresAt > Date.now() ? tables.admins.get(session.adminId) : undefined;
      return admin && { id: admin.id, username: admin.username };
    },
    deleteSession: async (token) => void tables.sessions.delete(hashToken(token)),
  };
  return store;
}

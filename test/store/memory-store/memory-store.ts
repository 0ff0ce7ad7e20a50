import { requestWindowsInMemory } from "../../../src/store/request-windows-in-memory.js";
import { randomBytes } from "node:crypto";
import type { Store } from "../../../src/store/store.js";
import { teamStore, userStore } from "./accounts.js";
import { adminStore } from "./admins.js";
import { apiKeyStore } from "./api-keys.js";
import { connectionStore } from "./connections.js";
import { jobStore } from "./jobs.js";
import { libraryStore, versionStore } from "./libraries.js";
import { oauthStore } from "./oauth.js";
import { settingStore } from "./secrets.js";
import { snippetStore } from "./snippets.js";
import { createTables, type MemoryTables } from "./tables.js";
import { auditStore, usageStore } from "./usage-audit.js";

/** The schema the records follow: the contract's, whatever engine holds them (SQLite's migrations number it). */
const SCHEMA_VERSION = 14;

/**
 * A second engine of the records contract (src/store/store.ts), in memory, written with Maps: proof that the contract
 * names no engine, and the reference the contract suite (test/store/contract/) is run against beside SQLite.
 * Nothing is kept when the process ends. `seed` writes what no operation of the contract writes (a redirect is made
 * only by a schema migration).
 */
export function createMemoryStore(key: Buffer = randomBytes(32)): { store: Store; tables: MemoryTables; seed: { redirect(oldId: string, newId: string): Promise<void> } } {
  const tables = createTables(key);
  const store: Store = {
    libraries: libraryStore(tables),
    versions: versionStore(tables),
    snippets: snippetStore(tables),
    jobs: jobStore(tables),
    teams: teamStore(tables),
    users: userStore(tables),
    apiKeys: apiKeyStore(tables),
    connections: connectionStore(tables),
    oauth: oauthStore(tables),
    admins: adminStore(tables),
    settings: settingStore(tables),
    audit: auditStore(tables),
    usage: usageStore(tables),
    requestWindows: requestWindowsInMemory(),
    schemaVersion: async () => SCHEMA_VERSION,
  };
  return { store, tables, seed: { redirect: async (oldId, newId) => void tables.redirects.set(oldId, newId) } };
}

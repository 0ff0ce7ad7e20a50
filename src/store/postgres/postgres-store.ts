import type pg from "pg";
import type { Store } from "../store.js";
import { createAccountGroups } from "./account-groups.js";
import { migratePostgres, schemaVersionOf } from "./migrate.js";
import { jobStore } from "./jobs.js";
import { libraryStore } from "./libraries.js";
import { settingStore } from "./settings.js";
import { snippetStore } from "./snippets.js";
import { auditStore, usageStore } from "./usage-audit.js";
import { versionStore } from "./versions.js";
import { requestWindowStore } from "./request-windows.js";
import { endpointOf, openPool, type PoolSettings } from "./pool.js";
import { sqlOn, type PgContext } from "./sql.js";
import { inTransaction } from "./transaction.js";

/** A pool of its own from settings, or one the caller made (and ends). */
export type PostgresTarget = { settings: PoolSettings } | { pool: pg.Pool; url: string };

export interface PostgresStore {
  store: Store;
  /** Ends the pool when the store made it. */
  close(): Promise<void>;
}

/**
 * The PostgreSQL engine of the store: the schema brought to the current version (migrate.ts), then the groups over
 * one pool. `key` seals and unseals the secrets that operations store, as in the SQLite engine.
 */
export async function openPostgresStore(target: PostgresTarget, key: Buffer): Promise<PostgresStore> {
  const owned = "settings" in target;
  const pool = owned ? openPool(target.settings) : target.pool;
  const endpoint = endpointOf(owned ? target.settings.url : target.url);
  try {
    await migratePostgres(pool, endpoint);
  } catch (err) {
    if (owned) await pool.end();
    throw err;
  }
  const context: PgContext = {
    sql: sqlOn(pool, endpoint),
    transaction: (work) => inTransaction(pool, endpoint, work),
    key,
  };
  const store: Store = {
    libraries: libraryStore(context),
    versions: versionStore(context),
    snippets: snippetStore(context),
    jobs: jobStore(context),
    ...createAccountGroups(context),
    settings: settingStore(context),
    audit: auditStore(context),
    requestWindows: requestWindowStore(context),
    usage: usageStore(context),
    schemaVersion: () => schemaVersionOf(context.sql),
  };
  return { store, close: async () => (owned ? pool.end() : undefined) };
}

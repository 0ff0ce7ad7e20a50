import type pg from "pg";
import { LdsError } from "../../errors.js";
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from "./schema.js";
import { NOW_TEXT } from "./schema-text.js";
import type { Sql } from "./sql.js";
import { inTransaction } from "./transaction.js";

/**
 * The advisory lock under which the schema is applied: replicas starting at once take it in turn, so one applies
 * the schema and the others, once they hold it, find it at the current version. Any constant works if nothing
 * else in the database uses it: "LDS" and 1.
 */
export const SCHEMA_LOCK = 0x4c445301;

/**
 * Bring a database to the current schema version, in one transaction, each version applied recorded in
 * `schema_migrations` as lds.db records them (version, name, applied_at): the database's version is the highest. A
 * database at a newer version than this LDS knows is refused with schema_too_new, nothing changed. Answers the
 * version the database is at now.
 */
export async function migratePostgres(pool: pg.Pool, endpoint: { host: string; port: number }): Promise<number> {
  return inTransaction(pool, endpoint, async (tx) => {
    // A transaction-level advisory lock: released at COMMIT or ROLLBACK, and by the server if this process dies.
    await tx.run("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
    await tx.run(SCHEMA_MIGRATIONS_TABLE);
    const current = await schemaVersionOf(tx);
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new LdsError("schema_too_new", `The database at ${endpoint.host}:${endpoint.port} is at schema version ${current}; this LDS knows versions up to ${POSTGRES_SCHEMA_VERSION}.`, {
        hint: "Upgrade LDS to the version that wrote this database (or a newer one); nothing was changed.",
      });
    }
    await applyMigrations(tx, current, POSTGRES_SCHEMA_VERSION);
    return POSTGRES_SCHEMA_VERSION;
  });
}

/** The versions applied, as lds.db records them (version, name, applied_at). */
const SCHEMA_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL DEFAULT ${NOW_TEXT})`;

/**
 * Apply the migrations after version `from` up to `to` in the transaction `tx`, each recorded in schema_migrations
 * (created if need be), in the schema its search_path names first: a restore builds a schema of its own this way.
 */
export async function applyMigrations(tx: Sql, from: number, to: number): Promise<void> {
  await tx.run(SCHEMA_MIGRATIONS_TABLE);
  for (const migration of POSTGRES_MIGRATIONS) {
    if (migration.version <= from || migration.version > to) continue;
    await tx.run(migration.sql);
    await tx.run("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name]);
  }
}

/** The highest version recorded (0 for an empty database). */
export async function schemaVersionOf(sql: Sql): Promise<number> {
  return (await sql.row<{ version: number | null }>("SELECT max(version) AS version FROM schema_migrations"))?.version ?? 0;
}

import type pg from "pg";
import { LdsError } from "../../errors.js";
import { translateError } from "../../store/postgres/pool.js";
import { inTransaction } from "../../store/postgres/transaction.js";
import type { Sql } from "../../store/postgres/sql.js";
import { endpointOfPool } from "./copy-connection.js";
import { ident } from "./records-catalog.js";
import { preRestoreSchemaName } from "./schema-names.js";
import { SERVING_LOCK, SERVING_LOCK_WAIT_MS } from "./serving-lock.js";

/** SQLSTATE of a lock not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = "55P03";

/**
 * Put a restored schema (importRecords) in the live schema's place, in one transaction, while no replica serves:
 * the live schema (the current_schema() of the pool's connections, normally `public`) is renamed
 * `lds_pre_restore_<UTC time>` and the restored one takes its name. Nothing is deleted: the previous schema is the
 * way back (rename them again). Replicas that serve hold SERVING_LOCK shared: then nothing changes and the swap
 * fails with volume_locked, after waiting `lockWaitMs` for them to stop.
 */
export async function swapInRestoredSchema(pool: pg.Pool, restoredSchema: string, options: { lockWaitMs?: number; now?: Date } = {}): Promise<{ previous: string; live: string }> {
  const endpoint = endpointOfPool(pool);
  const waitMs = options.lockWaitMs ?? SERVING_LOCK_WAIT_MS;
  try {
    return await inTransaction(pool, endpoint, async (tx) => {
      await tx.run(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(waitMs))}`);
      await tx.run("SELECT pg_advisory_xact_lock($1)", [SERVING_LOCK]);
      const live = (await tx.row<{ schema: string | null }>("SELECT current_schema() AS schema"))?.schema;
      if (!live)
        throw new LdsError("validation_error", "The database's connections have no current schema (search_path names none that exists): there is no live schema to replace.", {
          hint: "Check the role's search_path.",
        });
      if (live === restoredSchema) throw new LdsError("validation_error", `${restoredSchema} is the live schema already: nothing to swap.`, { hint: "Give the schema a restore made (lds_restore_…)." });
      await checkRestored(tx, restoredSchema);
      const previous = preRestoreSchemaName(options.now);
      if (await tx.row("SELECT 1 FROM pg_namespace WHERE nspname = $1", [previous])) {
        throw new LdsError("validation_error", `The schema ${previous} already exists: another restore was put in place this second. Nothing was changed.`, { hint: "Run it again in a moment." });
      }
      await tx.run(`ALTER SCHEMA ${ident(live)} RENAME TO ${ident(previous)}`);
      await tx.run(`ALTER SCHEMA ${ident(restoredSchema)} RENAME TO ${ident(live)}`);
      return { previous, live };
    });
  } catch (err) {
    if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
    const holders = await servingReplicas(pool).catch(() => []);
    throw new LdsError(
      "volume_locked",
      `Replicas are serving this database (${endpoint.host}:${endpoint.port})${holders.length > 0 ? `: ${holders.join(", ")}` : ""}; the restored schema ${restoredSchema} was not put in place and nothing was changed.`,
      {
        cause: translateError(err, endpoint),
        hint: "Stop every server (replica) that serves this database, then run the restore's swap again (the restored schema is kept).",
      },
    );
  }
}

/** The schema exists and was made as a restore makes one: tables and a schema version. */
async function checkRestored(tx: Sql, schema: string): Promise<void> {
  const made = await tx.row("SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'schema_migrations'", [schema]);
  if (!made) {
    throw new LdsError("validation_error", `There is no restored schema ${schema} (a schema with LDS's tables) in this database. Nothing was changed.`, {
      hint: "Give the name importRecords answered (lds_restore_…); list them with \\dn in psql.",
    });
  }
}

/** Who holds the serving lock, as far as this role may see: application name and address of each session. */
export async function servingReplicas(pool: pg.Pool): Promise<string[]> {
  const rows = await pool.query<{ who: string }>(
    `SELECT coalesce(nullif(a.application_name, ''), 'pid ' || l.pid) || coalesce(' at ' || host(a.client_addr), '') AS who
       FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1
      ORDER BY 1`,
    [SERVING_LOCK],
  );
  return rows.rows.map((r) => r.who);
}

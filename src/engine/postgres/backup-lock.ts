import os from "node:os";
import type { DataVolume } from "../../config/data-volume.js";
import { LdsError } from "../../errors.js";
import { openPool } from "../../store/postgres/pool.js";
import type { Sql } from "../../store/postgres/sql.js";
import { delaypoint } from "../../util/failpoint.js";
import type { HeldLock } from "../../locks/lock-file.js";
import type { BackupLockPurpose } from "../../locks/volume-locks.js";
import { openCopyConnection, type CopyConnection } from "./copy-connection.js";
import { poolSettingsOf, postgresSettingsOf } from "./open-postgres.js";
import { BACKUP_LOCK } from "./serving-lock.js";
import { sqlOn } from "../../store/postgres/sql.js";
import { endpointOfPool } from "./copy-connection.js";

/**
 * What holds the backups' lock: a backup (or a restore staged for a server to apply, as on SQLite), and also what must
 * not commit while a backup copies: a restore's swap and a key rotation (either would give an archive of two states).
 */
export type PostgresBackupLockPurpose = BackupLockPurpose | "restore" | "key rotation";

/** What the holder's connection calls itself (pg_stat_activity.application_name), read back by a refused taker. */
const HOLDER_PREFIX = "lds ";

/**
 * One backup of a PostgreSQL volume's records at a time, across processes and replicas: a session advisory lock
 * taken with pg_try_advisory_lock on a connection of its own, held until release() (which unlocks and ends it). A
 * holder that dies loses its connection, and the server frees the lock with it: nothing stale to recover. Busy:
 * backup_running (volume_locked while a restore is staged) naming the holder, as far as this role may see it.
 */
export async function lockPostgresBackups(volume: DataVolume, purpose: PostgresBackupLockPurpose): Promise<HeldLock> {
  const pool = openPool({ ...poolSettingsOf(postgresSettingsOf(volume)), max: 1 });
  let connection: CopyConnection;
  try {
    // The pool only lends its settings (server, credentials, TLS): the connection is the lock's own.
    connection = await openCopyConnection(pool);
  } finally {
    await pool.end();
  }
  try {
    const name = `${HOLDER_PREFIX}${purpose}, pid ${process.pid} on ${os.hostname()}`;
    await connection.sql.run("SELECT set_config('application_name', $1, false)", [name]);
    const taken = await connection.sql.row<{ taken: boolean }>("SELECT pg_try_advisory_lock($1) AS taken", [BACKUP_LOCK]);
    if (!taken?.taken) throw busy(await holders(connection.sql), connection.endpoint);
  } catch (err) {
    await connection.close();
    throw err;
  }
  // For the tests of what waits for a backup: a backup that keeps the lock for a while (see util/failpoint.ts).
  if (purpose === "backup") await delaypoint("backup-holding-lock", 65_000);
  let released: Promise<void> | undefined;
  return {
    file: `advisory lock ${BACKUP_LOCK} on ${connection.endpoint.host}:${connection.endpoint.port}`,
    setPurpose: () => {},
    release: () =>
      (released ??= connection.sql
        .run("SELECT pg_advisory_unlock($1)", [BACKUP_LOCK])
        .then(
          () => {},
          // Ending the connection frees it anyway.
          () => {},
        )
        .finally(() => connection.close())),
  };
}

interface Holder {
  who: string;
}

/** Who holds the backup lock: each session's application name (an LDS one says what it does), address and start. */
async function holders(sql: Sql): Promise<Holder[]> {
  return sql.rows<Holder>(
    `SELECT coalesce(nullif(a.application_name, ''), 'pid ' || l.pid) || coalesce(' at ' || host(a.client_addr), '')
            || coalesce(', since ' || to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '') AS who
       FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1`,
    [BACKUP_LOCK],
  );
}

function busy(found: Holder[], endpoint: { host: string; port: number }): LdsError {
  const where = `${endpoint.host}:${endpoint.port}`;
  const who = found.map((h) => h.who).join("; ");
  if (found.some((h) => h.who.startsWith(`${HOLDER_PREFIX}restore staged`))) {
    return new LdsError("volume_locked", `A restore is being staged on the database at ${where} (${who}): no backup starts before it is applied.`, {
      hint: "Back up once the restore has been applied.",
    });
  }
  const changing = found.find((h) => h.who.startsWith(`${HOLDER_PREFIX}restore,`) || h.who.startsWith(`${HOLDER_PREFIX}key rotation,`));
  if (changing) {
    return new LdsError("backup_running", `The database at ${where} is being changed (${who}): no backup runs before it is done.`, {
      hint: "Wait for the restore or the key rotation to finish, then try again.",
    });
  }
  return new LdsError("backup_running", `A backup of the database at ${where} is already running (${who || "a session this role cannot see"}).`, {
    hint: "Wait for it to finish, then try again (a backup that died lets go of its lock with its connection).",
  });
}

/**
 * Whether any session holds the backup lock, read from pg_locks without taking it: a status request that took the
 * lock to find out would, for that moment, refuse a backup started elsewhere (a scheduled one, cron's lds-backup).
 */
export async function postgresBackupLockHeld(volume: DataVolume): Promise<boolean> {
  const pool = openPool({ ...poolSettingsOf(postgresSettingsOf(volume)), max: 1 });
  try {
    return (await holders(sqlOn(pool, endpointOfPool(pool)))).length > 0;
  } finally {
    await pool.end();
  }
}

import fs from "node:fs";
import type pg from "pg";
import type { DataVolume } from "../../config/data-volume.js";
import { LdsError, fromSystemError } from "../../errors.js";
import { keyFingerprint, loadSharedKey } from "../../secrets/key-file.js";
import { openPool, translateError } from "../../store/postgres/pool.js";
import { sqlOn } from "../../store/postgres/sql.js";
import { POSTGRES_SCHEMA_VERSION } from "../../store/postgres/schema.js";
import { FINGERPRINT_SETTING } from "../../store/postgres/settings.js";
import { failpoint } from "../../util/failpoint.js";
import { exists } from "../../util/files.js";
import type { ArchiveCopies, RecordsRestore } from "../engine.js";
import { prepareRestoredDatabases } from "../sqlite/prepare-restored-db.js";
import { migrateStagedRecords } from "../sqlite/staged-copies.js";
import { lockPostgresBackups } from "./backup-lock.js";
import { databaseOfPool, endpointOfPool } from "./copy-connection.js";
import { poolSettingsOf, postgresSettingsOf } from "./open-postgres.js";
import { ident } from "./records-catalog.js";
import { importRecords } from "./records-import.js";
import { servingReplicas, swapInRestoredSchema } from "./schema-swap.js";
import { servedRefusal } from "./served-refusal.js";
import { SERVING_LOCK } from "./serving-lock.js";
import { checkKeyFolderWritable, dropNextKey, keepKeyAside, putNextKeyInPlace, stageNextKey } from "./shared-key-file.js";
import { recordedVectorsEmbedder } from "./vectors-embedder.js";
import { importArchiveVectors, type ArchiveVectorsImport } from "./vectors-import.js";

const NOT_RESTORED = "the archive was not restored (the live schema and the key file are as they were)";

/**
 * Restore an archive's verified copies into the PostgreSQL database while no replica serves it: the staged lds.db
 * made ready (partial libraries queued) and migrated to this build's schema, its records and the vectors copied
 * into a new schema in one transaction, which then takes the live schema's place (the live one is kept as
 * `lds_pre_restore_<time>`: the way back). The key file ends up holding the archive's key, replaced crash-safely
 * (shared-key-file.ts). Replicas serving: volume_locked naming them, the imported schema dropped, nothing changed.
 */
export async function restoreIntoPostgres(volume: DataVolume, copies: ArchiveCopies, partial: string[], options: { now?: Date; lockWaitMs?: number } = {}): Promise<RecordsRestore> {
  const settings = postgresSettingsOf(volume);
  const now = options.now ?? new Date();
  const archiveKey = readArchiveKey(copies.key.file, copies.key.name);
  const currentKey = exists(settings.keyFile) ? loadSharedKey(settings.keyFile) : undefined;
  const keyChanges = !currentKey?.equals(archiveKey);
  if (keyChanges) checkKeyFolderWritable(settings.keyFile);
  // No backup copies while the swap commits (its later statements would read the restored tables: an archive of two
  // states), and none starts before the restore is done: the backups' lock, from before the serving check to the end.
  const backups = await lockPostgresBackups(volume, "restore").catch((err: unknown) => {
    throw err instanceof LdsError ? new LdsError(err.code, `${err.message} ${capitalized(NOT_RESTORED)}.`, { cause: err, hint: err.hint }) : err;
  });
  const pool = openPool(poolSettingsOf(settings));
  try {
    const database = databaseOfPool(pool);
    // Refused before the long part when replicas serve now; the swap checks again under the lock.
    await refuseWhileServed(pool, database);
    const requeued = prepareRestoredDatabases(copies.records.file, copies.vectors.file, partial);
    migrateStagedRecords(copies.records.file, POSTGRES_SCHEMA_VERSION);
    let vectors: ArchiveVectorsImport = { kept: 0 };
    const recordedEmbedder = await recordedVectorsEmbedder(sqlOn(pool, settings.endpoint));
    const imported = await importRecords(copies.records.file, pool, {
      now,
      alsoInTransaction: async (connection, schema) => {
        vectors = await importArchiveVectors(connection, schema, copies.vectors.file, recordedEmbedder);
        // The archive's records were checked against its key; an archive of a volume that never recorded the
        // fingerprint gets it now, so that every replica's key is checked against the archive's at start.
        await connection.sql.run(`INSERT INTO ${ident(schema)}.settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [FINGERPRINT_SETTING, keyFingerprint(archiveKey)]);
      },
    });
    let keptKey: string | undefined;
    try {
      keptKey = keyChanges && currentKey ? keepKeyAside(settings.keyFile, "pre-restore", now) : undefined;
      if (keyChanges) stageNextKey(settings.keyFile, archiveKey);
    } catch (err) {
      // The import committed into a schema of its own: dropped, as when the swap is refused; the live one never changed.
      if (keptKey) fs.rmSync(keptKey, { force: true });
      await pool.query(`DROP SCHEMA IF EXISTS ${ident(imported.schema)} CASCADE`).catch(() => {});
      const cause = err instanceof LdsError ? err : fromSystemError(err, settings.keyFile);
      throw new LdsError(cause.code, `The archive's key could not be made ready beside ${settings.keyFile}: ${cause.message} The imported records were dropped: ${NOT_RESTORED}.`, {
        cause: err,
        hint: cause.hint,
      });
    }
    failpoint("pg-restore-before-swap");
    let previous: string;
    let live: string;
    try {
      ({ previous, live } = await swapInRestoredSchema(pool, imported.schema, { now, lockWaitMs: options.lockWaitMs }));
    } catch (err) {
      // Refused before the swap's commit: nothing changed, the staged key goes. Any other failure may have come after
      // the commit (a lost connection): the .next key stays for the next open to put in place if the database is the
      // archive's (shared-key-file.ts).
      const refused = err instanceof LdsError && (err.code === "volume_locked" || err.code === "validation_error");
      if (keyChanges && refused) dropNextKey(settings.keyFile, keptKey);
      await pool.query(`DROP SCHEMA IF EXISTS ${ident(imported.schema)} CASCADE`).catch(() => {});
      if (err instanceof LdsError && err.code === "volume_locked") throw servedRefusal(await servingReplicas(pool).catch(() => []), database, NOT_RESTORED);
      throw err;
    }
    failpoint("pg-restore-swapped");
    if (keyChanges) {
      try {
        putNextKeyInPlace(settings.keyFile, archiveKey);
      } catch (err) {
        const cause = fromSystemError(err, settings.keyFile);
        throw new LdsError(cause.code, `The archive was restored into ${database} (the previous schema is ${previous}), but its key could not be put in place: ${cause.message}`, {
          cause: err,
          hint: `The archive's key waits beside the key file as ${settings.keyFile}.next: the next start on this machine puts it in place, or move it over the key file yourself.`,
        });
      }
    }
    return {
      database,
      liveSchema: live,
      previousSchema: previous,
      requeued,
      vectors: vectors.kept,
      vectorsSkipped: vectors.skipped,
      rows: imported.rows,
      key: { changed: keyChanges, file: settings.keyFile, keptAs: keptKey ?? null },
    };
  } finally {
    await pool.end();
    await backups.release();
  }
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function readArchiveKey(file: string, name: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw fromSystemError(err, name);
  }
}

/** volume_locked when replicas hold the serving lock now: nothing made yet. */
async function refuseWhileServed(pool: pg.Pool, database: string): Promise<void> {
  const client = await pool.connect().catch((err: unknown) => {
    throw translateError(err, endpointOfPool(pool));
  });
  try {
    const { rows } = await client.query<{ free: boolean }>("SELECT pg_try_advisory_lock($1) AS free", [SERVING_LOCK]);
    if (rows[0]?.free) {
      await client.query("SELECT pg_advisory_unlock($1)", [SERVING_LOCK]);
      return;
    }
  } finally {
    client.release();
  }
  throw servedRefusal(await servingReplicas(pool).catch(() => []), database, NOT_RESTORED);
}

import { randomBytes } from "node:crypto";
import type { DataVolume } from "../../config/data-volume.js";
import { LdsError } from "../../errors.js";
import { keyFingerprint } from "../../secrets/key-file.js";
import { KEY_BYTES } from "../../secrets/seal.js";
import { openPool } from "../../store/postgres/pool.js";
import { resealEverySecret } from "../../store/postgres/settings.js";
import { inTransaction } from "../../store/postgres/transaction.js";
import type { SharedKeyRotation } from "../engine.js";
import { lockPostgresBackups } from "./backup-lock.js";
import { databaseOfPool, endpointOfPool } from "./copy-connection.js";
import { poolSettingsOf, postgresSettingsOf } from "./open-postgres.js";
import { servingReplicas } from "./schema-swap.js";
import { servedRefusal } from "./served-refusal.js";
import { SERVING_LOCK, SERVING_LOCK_WAIT_MS } from "./serving-lock.js";
import { checkKeyFolderWritable, dropNextKey, keepKeyAside, putNextKeyInPlace, stageNextKey } from "./shared-key-file.js";

/** SQLSTATE of a lock not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = "55P03";

/**
 * A new shared key for a PostgreSQL database, while no replica serves it: the serving lock taken exclusively (serving
 * replicas hold it shared: volume_locked naming them, nothing changed), every secret re-sealed and the new fingerprint
 * recorded in one transaction, the key file replaced crash-safely around it (shared-key-file.ts: the old key kept as
 * `<file>.pre-rotation-<time>`, 0600). `currentKey` is the key file's, already checked against the database.
 */
export async function rotateSharedKey(volume: DataVolume, currentKey: Buffer, options: { lockWaitMs?: number; now?: Date } = {}): Promise<SharedKeyRotation> {
  const settings = postgresSettingsOf(volume);
  const keyFile = settings.keyFile;
  checkKeyFolderWritable(keyFile);
  // No backup copies while the secrets are re-sealed (an archive would hold secrets and a key of two states), and none
  // starts before the new key is in place: the backups' lock for the whole rotation.
  const backups = await lockPostgresBackups(volume, "key rotation").catch((err: unknown) => {
    throw err instanceof LdsError ? new LdsError(err.code, `${err.message} The key was not rotated (the key file is as it was).`, { cause: err, hint: err.hint }) : err;
  });
  const pool = openPool(poolSettingsOf(settings));
  try {
    const database = databaseOfPool(pool);
    const newKey = randomBytes(KEY_BYTES);
    const fingerprint = keyFingerprint(newKey);
    const oldKeyFile = keepKeyAside(keyFile, "pre-rotation", options.now);
    stageNextKey(keyFile, newKey);
    let resealed: number;
    try {
      resealed = await inTransaction(pool, endpointOfPool(pool), async (tx) => {
        await tx.run(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(options.lockWaitMs ?? SERVING_LOCK_WAIT_MS))}`);
        await tx.run("SELECT pg_advisory_xact_lock($1)", [SERVING_LOCK]);
        return resealEverySecret(tx, currentKey, newKey, fingerprint);
      });
    } catch (err) {
      if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) {
        dropNextKey(keyFile, oldKeyFile);
        throw servedRefusal(await servingReplicas(pool).catch(() => []), database, "the key was not rotated (the key file is as it was)");
      }
      // Otherwise the commit may have happened (a connection lost while it was answered): the .next file stays, and
      // the next open on this machine puts it in place if and only if the database records its fingerprint.
      throw err;
    }
    // Committed: from here a crash is finished by the next open on this machine (the .next file matches the database).
    putNextKeyInPlace(keyFile, newKey);
    return { database, keyFile, oldKeyFile, resealed, fingerprint };
  } finally {
    await pool.end();
    await backups.release();
  }
}

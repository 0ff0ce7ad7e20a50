import { createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import { LdsError, fromSystemError } from "../errors.js";
import { KEY_BYTES } from "./seal.js";
import { createFileDurably } from "../util/files.js";

/**
 * Read secret.key, creating it (32 random bytes, mode 0600) when it does not exist and nothing needs it yet.
 * `sealedSecretsExist` says whether the database already holds secrets sealed under a key: then a missing
 * key must not be replaced by a new one, or those secrets would be lost for good.
 */
export function loadOrCreateKey(file: string, sealedSecretsExist: boolean): Buffer {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw fromSystemError(err, file);
    if (sealedSecretsExist) {
      throw new LdsError("key_missing", `${file} is missing, but the database holds secrets sealed with it.`, {
        hint: `Restore ${file} from the backup that holds this database (restoring that archive puts both back together).`,
      });
    }
    return createKey(file);
  }
  return readKey(file, stat);
}

/**
 * Read a key that must exist and is never created here: the key every replica of a shared database uses
 * (LDS_SECRET_KEY_FILE). Missing is key_missing; readable by others or of the wrong size is key_insecure.
 */
export function loadSharedKey(file: string): Buffer {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw fromSystemError(err, file);
    throw new LdsError("key_missing", `The key file ${file} does not exist; with a shared database the key is never created, so that every replica seals with the same one.`, {
      hint: `Copy the key the other replicas use to ${file} (mode 0600); for a new database, create it once: head -c ${KEY_BYTES} /dev/urandom > ${file} && chmod 600 ${file}`,
    });
  }
  return readKey(file, stat);
}

function readKey(file: string, stat: fs.Stats): Buffer {
  if ((stat.mode & 0o077) !== 0) {
    throw new LdsError("key_insecure", `${file} is readable by group or others (mode ${modeString(stat.mode)}).`, {
      hint: `Run: chmod 600 ${file}`,
    });
  }
  let key: Buffer;
  try {
    key = fs.readFileSync(file);
  } catch (err) {
    throw fromSystemError(err, file);
  }
  if (key.length !== KEY_BYTES) {
    throw new LdsError("key_insecure", `${file} holds ${key.length} bytes instead of ${KEY_BYTES}.`, {
      hint: `Restore ${file} from a backup; it was truncated or replaced.`,
    });
  }
  return key;
}

function createKey(file: string): Buffer {
  const key = randomBytes(KEY_BYTES);
  try {
    // Never overwrite a key another process created a moment ago ("wx").
    createFileDurably(file, key);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return loadOrCreateKey(file, true);
    throw fromSystemError(err, file);
  }
  return key;
}

/** A non-secret fingerprint of the key, stored in the database to detect a key that does not belong to it. */
export function keyFingerprint(key: Buffer): string {
  return createHmac("sha256", key).update("lds key fingerprint v1").digest("hex").slice(0, 32);
}

function modeString(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, "0");
}

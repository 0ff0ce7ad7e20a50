import fs from "node:fs";
import path from "node:path";
import { fileTimestamp } from "../../config/data-volume.js";
import { LdsError, fromSystemError } from "../../errors.js";
import { keyFingerprint } from "../../secrets/key-file.js";
import { KEY_BYTES } from "../../secrets/seal.js";
import { createFileDurably, exists, fsyncDirectory, fsyncFile } from "../../util/files.js";

/**
 * Replacing the shared key file (LDS_SECRET_KEY_FILE) of a PostgreSQL database crash-safely, for a key rotation and
 * for a restore of an archive sealed with another key. The steps:
 * 1. the old key is copied aside (`<file>.pre-rotation-<time>` / `<file>.pre-restore-<time>`, 0600, fsynced);
 * 2. the new key is written beside the file as `<file>.next` (0600, fsynced);
 * 3. the database's transaction commits: its secrets are sealed with the new key and it records its fingerprint;
 * 4. `<file>.next` is renamed over the file.
 * A crash before 3 leaves the old key and the old records together (the `.next` file does not match them and is
 * replaced by the next rotation or restore); a crash between 3 and 4 is finished when this machine next opens the
 * database (finishKeyReplacement): the `.next` file matches the fingerprint the database records, so it is put in
 * place. Either way the key file and the records belong together again, or the `.next` file says which key they need.
 */

/** Where the next key waits for its transaction to commit. */
export const nextKeyFile = (keyFile: string) => `${keyFile}.next`;

/** Before anything changes: the key file's folder takes new files (step 1, 2 and 4 write there). */
export function checkKeyFolderWritable(keyFile: string): void {
  const folder = path.dirname(path.resolve(keyFile));
  try {
    fs.accessSync(folder, fs.constants.W_OK);
  } catch (err) {
    throw new LdsError("permission_denied", `The key file's folder ${folder} cannot be written: the key could not be replaced there. Nothing was changed.`, {
      cause: err,
      hint: "Run as the user that owns the key file (its folder must be writable), then run it again.",
    });
  }
}

/** Step 1: the current key copied to `<file>.<suffix>-<time>` (0600, fsynced), never overwriting one. Answers its path. */
export function keepKeyAside(keyFile: string, suffix: string, now = new Date()): string {
  const base = `${keyFile}.${suffix}-${fileTimestamp(now)}`;
  let kept = base;
  for (let i = 2; exists(kept); i++) kept = `${base}-${i}`;
  try {
    fs.copyFileSync(keyFile, kept, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(kept, 0o600);
    fsyncFile(kept);
    fsyncDirectory(path.dirname(kept));
  } catch (err) {
    throw fromSystemError(err, kept);
  }
  return kept;
}

/** Step 2: the new key as `<file>.next` (0600, fsynced), replacing one an interrupted attempt left. */
export function stageNextKey(keyFile: string, key: Buffer): void {
  const next = nextKeyFile(keyFile);
  try {
    fs.rmSync(next, { force: true });
    createFileDurably(next, key);
  } catch (err) {
    throw fromSystemError(err, next);
  }
}

/**
 * Step 4: the new key in place. Given `key`, a `.next` file already gone is fine when the key file holds it: another
 * open on this machine finished the step between the commit and this rename (finishKeyReplacement).
 */
export function putNextKeyInPlace(keyFile: string, key?: Buffer): void {
  try {
    fs.renameSync(nextKeyFile(keyFile), keyFile);
    fsyncDirectory(path.dirname(keyFile));
  } catch (err) {
    if (key && (err as NodeJS.ErrnoException).code === "ENOENT" && holds(keyFile, key)) return;
    throw fromSystemError(err, keyFile);
  }
}

function holds(keyFile: string, key: Buffer): boolean {
  try {
    return fs.readFileSync(keyFile).equals(key);
  } catch {
    return false;
  }
}

/** When the transaction did not commit: the staged key (and a copy kept aside for nothing) removed. */
export function dropNextKey(keyFile: string, keptAside?: string): void {
  fs.rmSync(nextKeyFile(keyFile), { force: true });
  if (keptAside) fs.rmSync(keptAside, { force: true });
}

/**
 * At open, before the key is read: a `<file>.next` whose fingerprint is the one the database records is the key
 * of a rotation or restore that committed and was cut off before its rename: it is put in place. One that does not
 * match is left alone (a rotation may be under way in another process on this machine). Answers whether it did.
 */
export function finishKeyReplacement(keyFile: string, recordedFingerprint: string | undefined): boolean {
  const next = nextKeyFile(keyFile);
  if (recordedFingerprint === undefined || !exists(next)) return false;
  let key: Buffer;
  try {
    key = fs.readFileSync(next);
  } catch (err) {
    throw fromSystemError(err, next);
  }
  if (key.length !== KEY_BYTES || keyFingerprint(key) !== recordedFingerprint) return false;
  putNextKeyInPlace(keyFile);
  return true;
}

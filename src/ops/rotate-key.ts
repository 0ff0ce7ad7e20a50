import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { dataVolume, fileTimestamp } from "../config/data-volume.js";
import type { DatabaseSettings } from "../config/database-settings.js";
import { chooseEngine, requireEngineWork } from "../engine/choose-engine.js";
import { LdsError, fromSystemError } from "../errors.js";
import { setting } from "../hints.js";
import { keyFingerprint } from "../secrets/key-file.js";
import { failpoint } from "../util/failpoint.js";
import { createFileDurably, exists, fsyncDirectory, fsyncFile } from "../util/files.js";
import { openVolume } from "../volume/open-volume.js";
import { lockVolumeExclusive, refuseWhileInUse } from "../locks/volume-locks.js";

export interface KeyRotation {
  /** Where the previous key is kept (never deleted): archives made before carry it anyway. */
  oldKeyFile: string;
  resealed: number;
  fingerprint: string;
}

/**
 * Replace secret.key with a new random key and re-seal every stored secret with it, with the server stopped (the
 * volume's exclusive lock; commands using the volume are refused). The steps, each survivable by a crash:
 * 1. the new key is written to secret.key.new (fsynced); 2. the old key is copied to secret.key.old-<time>;
 * 3. one durable transaction re-seals every secret and records the new key's fingerprint; 4. secret.key.new is
 * renamed over secret.key. Opening the volume finishes an interrupted rotation (volume/key-rotation.ts): after a
 * crash before step 3 commits the old key stays, after it the new one takes its place.
 */
export async function rotateKey(dataDir: string, engine?: DatabaseSettings): Promise<KeyRotation> {
  const volume = dataVolume(dataDir, engine);
  requireEngineWork(chooseEngine(volume), "keyRotation", "lds secrets rotate-key");
  const records = chooseEngine(volume).files(volume).records;
  if (!exists(records)) {
    throw new LdsError("data_dir_invalid", `${volume.root} holds no LDS database (${path.basename(records)}).`, { hint: `Point ${setting("dataDir")} at the server's data volume.` });
  }
  const lock = lockVolumeExclusive(volume, "key rotation");
  refuseWhileInUse(volume, lock);
  try {
    const opened = await openVolume(volume.root, undefined, { engine: volume.engine, command: "lds secrets rotate-key" });
    try {
      const newKey = randomBytes(32);
      try {
        createFileDurably(volume.keyNext, newKey);
      } catch (err) {
        throw fromSystemError(err, volume.keyNext);
      }
      failpoint("rotate-key-new-written");
      const oldKeyFile = `${volume.key}.old-${fileTimestamp()}`;
      try {
        fs.copyFileSync(volume.key, oldKeyFile, fs.constants.COPYFILE_EXCL);
        fs.chmodSync(oldKeyFile, 0o600);
        fsyncFile(oldKeyFile);
        fsyncDirectory(volume.root);
      } catch (err) {
        throw fromSystemError(err, oldKeyFile);
      }
      failpoint("rotate-key-old-kept");
      const fingerprint = keyFingerprint(newKey);
      const resealed = await opened.store.settings.resealSecrets(newKey, fingerprint);
      failpoint("rotate-key-resealed");
      try {
        fs.renameSync(volume.keyNext, volume.key);
        fsyncDirectory(volume.root);
      } catch (err) {
        throw fromSystemError(err, volume.key);
      }
      failpoint("rotate-key-in-place");
      return { oldKeyFile, resealed, fingerprint };
    } finally {
      opened.close();
    }
  } finally {
    lock.release();
  }
}

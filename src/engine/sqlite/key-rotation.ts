import fs from "node:fs";
import type Database from "better-sqlite3";
import type { DataVolume } from "../../config/data-volume.js";
import { fromSystemError } from "../../errors.js";
import { keyFingerprint } from "../../secrets/key-file.js";
import { FINGERPRINT_SETTING } from "./key-match.js";
import { getSetting } from "../../store/sqlite/settings.js";
import { exists, fsyncDirectory } from "../../util/files.js";

/**
 * Finish or drop a key rotation that a crash interrupted (ops/rotate-key.ts), before the key is loaded. The
 * database decides: if it already records the fingerprint of secret.key.new, its secrets are sealed with that key
 * and the file is put in place; otherwise the re-sealing never committed and the new file is removed. Either way
 * the volume's secrets unseal with secret.key afterwards. Returns what it did, for the log.
 */
export function finishKeyRotation(volume: DataVolume, db: Database.Database): "completed" | "dropped" | null {
  if (!exists(volume.keyNext)) return null;
  try {
    const next = fs.readFileSync(volume.keyNext);
    const recorded = getSetting(db, FINGERPRINT_SETTING);
    if (next.length === 32 && recorded === keyFingerprint(next)) {
      fs.renameSync(volume.keyNext, volume.key);
      fsyncDirectory(volume.root);
      return "completed";
    }
    fs.rmSync(volume.keyNext, { force: true });
    return "dropped";
  } catch (err) {
    throw fromSystemError(err, volume.keyNext);
  }
}

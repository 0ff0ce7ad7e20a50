import { dataVolume } from "../config/data-volume.js";
import { LdsError } from "../errors.js";
import { exists } from "../util/files.js";
import { isAlive, readOwner } from "../locks/lock-file.js";
import { lockVolumeExclusive, refuseWhileInUse } from "../locks/volume-locks.js";
import { registerVolumeUser } from "../locks/volume-users.js";
import { ensureDirectory } from "../volume/open-volume.js";
import { describeRecovery, recoverInterruptedRestore } from "./restore-journal.js";

export interface VolumeEntry {
  /** What was done first: an interrupted restore finished (one line each, for the operator). */
  recovered: string[];
  leave(): void;
}

/**
 * Every short command that opens a data volume enters it here first (issue 11, item 3): it registers as a user,
 * refuses while a restore (or a starting server) holds the volume, and finishes an interrupted restore before
 * anything can open, let alone create, lds.db. Commands may run beside a serving server.
 */
export function enterVolume(root: string, purpose: string): VolumeEntry {
  const volume = dataVolume(root);
  ensureDirectory(volume.root);
  const recovered: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const user = registerVolumeUser(volume, purpose);
    const holder = readOwner(volume.serverLock);
    if (holder && holder.purpose !== "server" && isAlive(holder)) {
      user.release();
      throw new LdsError("volume_locked", `The data volume ${volume.root} is being ${holder.purpose === "restore" ? "restored" : "prepared by a starting server"} (pid ${holder.pid}); nothing was done.`, {
        hint: "Wait for it to finish, then run this again.",
      });
    }
    if (!exists(volume.restoreJournal)) return { recovered, leave: () => user.release() };
    // A restore was interrupted after its point of no return: finish it, alone on the volume, then start over.
    user.release();
    const lock = lockVolumeExclusive(volume, "restore");
    try {
      refuseWhileInUse(volume, lock);
      recovered.push(...describeRecovery(recoverInterruptedRestore(volume)));
    } finally {
      lock.release();
    }
  }
  throw new LdsError("volume_locked", `Could not enter ${volume.root}: restores keep starting on it.`, { hint: "Run this again when no restore runs." });
}

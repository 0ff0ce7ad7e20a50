import { dataVolume } from "../config/data-volume.js";
import { isLdsError, LdsError } from "../errors.js";
import { action } from "../hints.js";
import { readOwner, type HeldLock } from "../locks/lock-file.js";
import { lockBackup } from "../locks/volume-locks.js";

/** What the server's backup runner says of a backup of its own that runs now. */
export interface OwnBackup {
  trigger: string;
  startedAt: string;
  phase: string;
  bytes: number;
  totalBytes: number;
}

/**
 * Staging a restore restarts the server, which would cut off a backup running in it, and make the next start wait
 * for one running in another process. So staging first takes backup.lock itself (purpose "restore staged"): the
 * check and the hold are one atomic step, and until the restart no backup starts, here or in cron's lds-backup.
 * Refused with `backup_running`, naming the backup, while one runs.
 */
export function holdBackupLockForRestore(dataDir: string, own: OwnBackup | null): HeldLock {
  if (own) {
    throw new LdsError(
      "backup_running",
      `This server's backup (started by ${own.trigger} at ${own.startedAt}; now ${describeProgress(own)}) is running: staging a restore restarts the server, which would cut it off.`,
      { hint: `Wait for it to finish (${action("backup.status")} shows its progress), then stage the restore again.` },
    );
  }
  const volume = dataVolume(dataDir);
  try {
    return lockBackup(volume, "restore staged");
  } catch (err) {
    const owner = isLdsError(err, "backup_running") ? readOwner(volume.backupLock) : null;
    if (!owner) throw err;
    throw new LdsError(
      "backup_running",
      `A backup of ${volume.root} is running (lds ${owner.purpose}, pid ${owner.pid} on ${owner.hostname}, since ${owner.since}): staging a restore restarts the server, which would then have to wait for it.`,
      { hint: "Wait for that backup to finish, then stage the restore again." },
    );
  }
}

/** What a backup asked for while a restore is being staged is told. */
export function restoreBeingStaged(): LdsError {
  return new LdsError("volume_locked", "A restore is being staged: the server restarts to apply it and starts no backup before.", {
    hint: "Back up once the server has restarted on the restored data.",
  });
}

/** "write, 12 of 150 MiB": where a running backup is, for a message. */
function describeProgress(progress: OwnBackup): string {
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  return progress.totalBytes > 0 ? `${progress.phase}, ${mib(progress.bytes)} of ${mib(progress.totalBytes)} MiB` : progress.phase;
}

import type { DataVolume } from "../config/data-volume.js";
import { LdsError } from "../errors.js";
import { acquireLock, type HeldLock } from "./lock-file.js";
import { liveVolumeUsers } from "./volume-users.js";

/**
 * Held by `lds serve` for its whole life, and by `lds-restore` while it replaces files. "server-starting" and
 * "restore" are exclusive of every other process; commands may open the volume beside a plain "server".
 */
export function lockVolumeExclusive(volume: DataVolume, purpose: "server" | "server-starting" | "restore" | "key rotation"): HeldLock {
  return acquireLock(volume.serverLock, {
    purpose,
    busyCode: "volume_locked",
    busyMessage: (owner) =>
      `The data volume ${volume.root} is in use by ${owner.purpose.startsWith("server") ? "an LDS server" : `an LDS ${owner.purpose}`} ` +
      `(pid ${owner.pid} on ${owner.hostname}, since ${owner.since}).`,
    busyHint: (owner) =>
      owner.purpose.startsWith("server")
        ? `Stop that server first (systemctl stop lds, or kill -TERM ${owner.pid}), then run this again.`
        : `Wait for pid ${owner.pid} to finish, then run this again.`,
  });
}

/** One backup at a time per volume, across processes: the CLI, cron's lds-backup and the server share it. */
export function lockBackup(volume: DataVolume): HeldLock {
  return acquireLock(volume.backupLock, {
    purpose: "backup",
    busyCode: "backup_running",
    busyMessage: (owner) =>
      `A backup of ${volume.root} is already running (pid ${owner.pid} on ${owner.hostname}, since ${owner.since}).`,
    busyHint: () => "Wait for it to finish, then try again (a lock left by a crashed backup is recovered by itself).",
  });
}

/**
 * For a starting server about to replace the volume's files: wait (bounded) for the commands that entered the
 * volume before the lock was taken; they are short, and new ones refuse while the lock says "server-starting".
 */
export async function waitUntilAlone(volume: DataVolume, lock: HeldLock, timeoutMs: number): Promise<void> {
  for (const until = Date.now() + timeoutMs; liveVolumeUsers(volume).length > 0 && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  refuseWhileInUse(volume, lock);
}

/**
 * For a holder of server.lock about to replace the volume's files: refuse while commands still have it open
 * (they registered before the lock was taken; any later one sees the lock and stops). Releases the lock first.
 */
export function refuseWhileInUse(volume: DataVolume, lock: HeldLock): void {
  const users = liveVolumeUsers(volume);
  if (users.length === 0) return;
  lock.release();
  const who = users.map((u) => `lds ${u.purpose} (pid ${u.pid})`).join(", ");
  throw new LdsError("volume_locked", `The data volume ${volume.root} is open by ${who}; nothing was changed.`, {
    hint: "Wait for those commands to finish (they are short), then run this again.",
  });
}

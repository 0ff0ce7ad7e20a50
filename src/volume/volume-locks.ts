import type { DataVolume } from "../config/data-volume.js";
import { acquireLock, type HeldLock } from "./lock-file.js";

/** Held by `lds serve` for its whole life, and by `lds-restore` while it replaces files. */
export function lockVolumeExclusive(volume: DataVolume, purpose: "server" | "restore"): HeldLock {
  return acquireLock(volume.serverLock, {
    purpose,
    busyCode: "volume_locked",
    busyMessage: (owner) =>
      `The data volume ${volume.root} is in use by ${owner.purpose === "server" ? "an LDS server" : `an LDS ${owner.purpose}`} ` +
      `(pid ${owner.pid} on ${owner.hostname}, since ${owner.since}).`,
    busyHint: (owner) =>
      owner.purpose === "server"
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

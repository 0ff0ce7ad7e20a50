import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { DataVolume } from "../config/data-volume.js";
import { LdsError } from "../errors.js";
import { stallpoint } from "../util/failpoint.js";
import { acquireLock, type HeldLock, type LockOwner } from "./lock-file.js";
import { liveVolumeUsers } from "./volume-users.js";

/**
 * Held by `lds serve` for its whole life, and by `lds-restore` while it replaces files. "server-starting" and
 * "restore" are exclusive of every other process; commands may open the volume beside a plain "server".
 */
export function lockVolumeExclusive(volume: DataVolume, purpose: "server" | "server-starting" | "restore" | "key rotation" | "index rebuild"): HeldLock {
  return acquireLock(volume.serverLock, {
    purpose,
    busyCode: "volume_locked",
    busyMessage: (owner) =>
      `The data volume ${volume.root} is in use by ${owner.purpose.startsWith("server") ? "an LDS server" : `an LDS ${owner.purpose}`} ` + `(pid ${owner.pid} on ${owner.hostname}, since ${owner.since}).`,
    busyHint: (owner) =>
      owner.purpose.startsWith("server") ? `Stop that server first (systemctl stop lds, or kill -TERM ${owner.pid}), then run this again.` : `Wait for pid ${owner.pid} to finish, then run this again.`,
  });
}

/**
 * What holds backup.lock: a backup, or a server staging a restore. The server holds it from the moment a restore is
 * asked for until it restarts into it, so that no backup (its own, cron's lds-backup) starts only to be cut off.
 */
export type BackupLockPurpose = "backup" | "restore staged";

/** One backup at a time per volume, across processes: the CLI, cron's lds-backup and the server share it. */
export function lockBackup(volume: DataVolume, purpose: BackupLockPurpose = "backup"): HeldLock {
  const lock = acquireLock(volume.backupLock, {
    purpose,
    busyCode: (owner) => (owner?.purpose === "restore staged" ? "volume_locked" : "backup_running"),
    busyMessage: (owner) =>
      owner.purpose === "restore staged"
        ? `A restore is being staged on ${volume.root}: the LDS server (pid ${owner.pid} on ${owner.hostname}) restarts to apply it and starts no backup before (since ${owner.since}).`
        : `A backup of ${volume.root} is already running (${describeUser(owner)}).`,
    busyHint: (owner) =>
      owner.purpose === "restore staged" ? "Back up once the server has restarted on the restored data." : "Wait for it to finish, then try again (a lock left by a crashed backup is recovered by itself).",
  });
  // For the tests of what waits for a backup: a backup that keeps the volume for a while (see util/failpoint.ts).
  if (purpose === "backup") stallpoint("backup-holding-lock", 65_000);
  return lock;
}

/** A volume user that is a backup (`lds backup`, cron's lds-backup, or a server's own backup). */
export function isBackup(user: LockOwner): boolean {
  return user.purpose === "backup";
}

/** "lds backup, pid 123 on host, since …": who holds the volume, for messages and logs. */
export function describeUser(user: LockOwner): string {
  return `lds ${user.purpose}, pid ${user.pid} on ${user.hostname}, since ${user.since}`;
}

export interface AloneWait {
  /** What the holder of server.lock is about to do, for the log: "applying the staged restore". */
  task: string;
  /** How long commands other than backups may keep the volume: they are short; past this the start is refused. */
  othersTimeoutMs: number;
  /** Told at once, then every `reportEveryMs`, while backups keep the volume: a line for the log, and who. */
  onWaiting?: (line: string, backups: LockOwner[], waitedMs: number) => void;
  reportEveryMs?: number;
}

/**
 * For a starting server about to replace the volume's files: wait for the commands that entered the volume before
 * the lock was taken; new ones refuse while the lock says "server-starting". A backup on this host is waited for
 * until it finishes, however long it takes: it holds a consistent copy being written, and cutting it off (or
 * giving up and leaving the server down) helps nobody. Anything else (a short command, or a backup on another
 * host, whose end we cannot see) is waited for `othersTimeoutMs` at most, then the start is refused.
 */
export async function waitUntilAlone(volume: DataVolume, lock: HeldLock, wait: AloneWait): Promise<void> {
  const started = Date.now();
  let reported = -Infinity;
  for (;;) {
    const users = liveVolumeUsers(volume);
    if (users.length === 0) return;
    const waited = Date.now() - started;
    const backups = users.filter((u) => isBackup(u) && u.hostname === os.hostname());
    if (backups.length < users.length && waited >= wait.othersTimeoutMs) return refuseWhileInUse(volume, lock);
    if (backups.length > 0 && Date.now() - reported >= (wait.reportEveryMs ?? 15_000)) {
      reported = Date.now();
      const pids = backups.map((b) => b.pid).join(" ");
      wait.onWaiting?.(
        `Waiting for ${backups.map((b) => `lds ${b.purpose} (pid ${b.pid} on ${b.hostname}, running since ${b.since})`).join(", ")} to finish before ${wait.task} ` +
          `(waited ${Math.round(waited / 1000)} s so far). ` +
          `To go on sooner, stop the backup (kill -TERM ${pids}: it stops cleanly and leaves no archive).`,
        backups,
        waited,
      );
    }
    await sleep(100);
  }
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
  // Backups alone get their own code, so that a script can tell "wait for the backup" from other conflicts.
  if (users.every(isBackup)) {
    throw new LdsError("backup_running", `The data volume ${volume.root} is open by ${who}; nothing was changed.`, {
      hint: `Wait for the backup (pid ${users.map((u) => u.pid).join(", ")}) to finish, then run this again.`,
    });
  }
  throw new LdsError("volume_locked", `The data volume ${volume.root} is open by ${who}; nothing was changed.`, {
    hint: "Wait for those commands to finish (they are short), then run this again.",
  });
}

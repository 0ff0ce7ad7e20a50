import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import type { DataVolume } from "../config/data-volume.js";
import { isLdsError } from "../errors.js";
import { describeRecovery, recoverInterruptedRestore } from "../ops/restore-journal.js";
import { outcomeRecord, type RestoreOutcome } from "../ops/restore-outcome.js";
import { applyStagedRestore } from "../ops/staged-restore.js";
import { exists } from "../util/files.js";
import type { HeldLock, LockOwner } from "../locks/lock-file.js";
import { lockVolumeExclusive, waitUntilAlone } from "../locks/volume-locks.js";

/** server.lock, waiting up to waitMs for a server that is stopping (a restart's predecessor) to release it. */
export async function takeVolume(volume: DataVolume, waitMs: number): Promise<HeldLock> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return lockVolumeExclusive(volume, "server-starting");
    } catch (err) {
      if (!isLdsError(err, "volume_locked") || Date.now() >= until) throw err;
      await sleep(100);
    }
  }
}

/**
 * Before the volume is opened: finish an interrupted restore, apply a staged one, drop unfinished uploads. Answers
 * the staged restore's outcome for the store (recorded once the volume is open), or null when there was none.
 */
export async function finishRestores(volume: DataVolume, lock: HeldLock, logger: Logger): Promise<RestoreOutcome | null> {
  // Replacing files needs the volume alone: commands that entered it before the lock was taken must be gone. A
  // backup (cron's lds-backup, say, between the old server's exit and this start) is waited for, however long.
  if (exists(volume.restoreJournal) || exists(volume.restoreStaged)) {
    const task = exists(volume.restoreJournal) ? "finishing the interrupted restore" : "applying the staged restore";
    await waitUntilAlone(volume, lock, { task, othersTimeoutMs: 60_000, onWaiting: (line, backups, waitedMs) => logWaiting(logger, line, backups, waitedMs) });
  }
  for (const line of describeRecovery(recoverInterruptedRestore(volume))) logger.warn(line);
  const restored = await applyStaged(volume, logger);
  fs.rmSync(path.join(volume.root, "restore-uploads"), { recursive: true, force: true });
  return restored;
}

/** A starting server waiting for a backup to leave the volume: the line says who and what to do, the fields the same. */
function logWaiting(logger: Logger, line: string, backups: LockOwner[], waitedMs: number): void {
  const waitingFor = backups.map(({ purpose, pid, hostname, since }) => ({ command: `lds ${purpose}`, pid, hostname, since }));
  logger.warn({ waitingFor, waitedSeconds: Math.round(waitedMs / 1000) }, line);
}

/** Apply a staged restore, if any; answers its outcome for the store (recorded once the volume is open). */
async function applyStaged(volume: DataVolume, logger: Logger): Promise<RestoreOutcome | null> {
  const outcome = await applyStagedRestore(volume);
  if (outcome.applied) {
    const { source, preRestoreDir, requeued, manifest } = outcome.applied;
    logger.warn({ source, createdAt: manifest.createdAt, preRestoreDir, requeued }, `Applied the staged restore of ${source}; the previous data is in ${preRestoreDir}.`);
  }
  if (outcome.failed) {
    logger.error(outcome.failed, `The staged restore of ${outcome.failed.source} failed and was not applied; starting on the current data. The archive is kept in ${outcome.failed.keptIn}.`);
  }
  return outcomeRecord(outcome);
}

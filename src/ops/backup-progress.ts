import type { Logger } from "pino";
import type { Store } from "../store/store.js";

export type Trigger = "api" | "schedule";

/** Where a running backup is; with replicas, which one runs it ("host:pid"). */
export interface BackupProgress {
  trigger: Trigger;
  startedAt: string;
  phase: string;
  bytes: number;
  totalBytes: number;
  replica?: string;
}

const PROGRESS = "backup.progress";

export interface SharedProgress {
  /** The backup's progress changed: written at once for a new phase, else at most once per interval (then resolves at once). */
  update(progress: BackupProgress): Promise<void>;
  /** The backup ended: the row is emptied once the writes before it are done. */
  clear(): Promise<void>;
}

/**
 * A running backup's progress in the records, so that every replica's status shows it, not only the one running it.
 * Writes go one after the other (a late one never overwrites a newer one or the clearing), and a failed write is
 * logged, never thrown at the backup. A row left by a replica that died is not "running": the status believes the
 * backup lock, which a dead replica's connection no longer holds.
 */
export function sharedProgress(store: Store, logger: Logger, intervalMs = 1000): SharedProgress {
  let writes = Promise.resolve();
  let writtenAt = 0;
  let phase: string | null = null;
  const write = (value: string) => {
    writes = writes.then(() => store.settings.set(PROGRESS, value)).catch((err: unknown) => logger.warn({ err: String(err) }, "could not record the backup's progress"));
    return writes;
  };
  return {
    update(progress) {
      if (progress.phase === phase && Date.now() - writtenAt < intervalMs) return Promise.resolve();
      phase = progress.phase;
      writtenAt = Date.now();
      return write(JSON.stringify(progress));
    },
    async clear() {
      phase = null;
      await write("");
    },
  };
}

/** The progress a replica recorded last, or null when none is recorded (the last backup ended). */
export async function recordedProgress(store: Store): Promise<BackupProgress | null> {
  const value = await store.settings.get(PROGRESS);
  return value ? (JSON.parse(value) as BackupProgress) : null;
}

/**
 * Empty the progress row a replica that died left behind (no process holds the backup lock), so that the status
 * stops probing the lock for it. Emptied only if it still holds `stale`: a backup that started since (it takes the
 * lock, then records its progress) keeps its row. Between that read and the write a new backup's first row may
 * still be emptied: it records its progress again at its next phase.
 */
export async function clearStaleProgress(store: Store, stale: BackupProgress): Promise<void> {
  const now = await store.settings.get(PROGRESS);
  if (now === JSON.stringify(stale)) await store.settings.set(PROGRESS, "");
}

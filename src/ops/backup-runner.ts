import { Cron } from "croner";
import type { Logger } from "pino";
import { loadBackupConfig, scheduleCron } from "./backup-config.js";
import { dataVolume } from "../config/data-volume.js";
import { isLdsError, LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import type { ArchiveWarning } from "../archive/archive-warnings.js";
import { drillArchive, drillWarnings, LAST_DRILL, type DrillRecord } from "./scheduled-drill.js";

/** The daily drill's time: after the default daily backup (03:00), in the schedule's timezone. */
const DAILY_DRILL = "30 4 * * *";
import { lockBackup } from "../locks/volume-locks.js";
import { delaypoint } from "../util/failpoint.js";
import type { HeldLock } from "../locks/lock-file.js";
import { holdBackupLockForRestore, restoreBeingStaged } from "./restore-hold.js";
import { backup, type BackupResult } from "./backup.js";
import { configuredDestination } from "./configured-destination.js";
import { action } from "../hints.js";
import { recordBackupRun } from "./backup-history.js";

export type Trigger = "api" | "schedule";

export interface LastResult {
  trigger: Trigger;
  startedAt: string;
  finishedAt: string;
  ok: boolean;
  archive?: string;
  location?: string;
  size?: number;
  sha256?: string;
  /** "age (2 recipients)", or null: the archive holds the volume key in clear (see `warnings`). */
  encryption?: string | null;
  warnings?: ArchiveWarning[];
  libraries?: number;
  durationMs: number;
  pruned?: string[];
  pruneError?: string | null;
  /** Leftovers of killed backups removed first, or why looking for them failed. */
  incompleteRemoved?: string[];
  incompleteError?: string | null;
  /** `hint` is neutral (src/hints.ts): the shell that shows it words it. */
  error?: { code: string; message: string; hint?: string };
}

export interface BackupStatus {
  running: boolean;
  progress: { trigger: Trigger; startedAt: string; phase: string; bytes: number; totalBytes: number } | null;
  nextRun: string | null;
  lastResult: LastResult | null;
  lastSkipped: { at: string; reason: string } | null;
  /** The last restore drill the server ran (backup config `drill.schedule`), and when the daily one runs next. */
  lastDrill: DrillRecord | null;
  nextDrill: string | null;
  /** What needs action now (a failed restore drill). */
  warnings: ArchiveWarning[];
}

export interface BackupRunner {
  /** Start a backup in the background; throws `backup_running` at once when one runs (here or in another process). */
  start(trigger: Trigger): { startedAt: string };
  status(): Promise<BackupStatus>;
  /** Re-read the schedule from the stored configuration: a change takes effect without a restart. */
  reschedule(): Promise<void>;
  /**
   * Start the drill of the newest archive now (what the daily schedule does); its outcome lands in the status.
   * Refused while a backup (it drills its own archive), another drill or a staged restore is under way.
   */
  startDrill(): void;
  /**
   * For staging a restore, whose restart would cut off a running backup: refuse with `backup_running` while one runs
   * (this server's or another process's), else hold backup.lock so that none starts (here, or cron's lds-backup)
   * until the server restarts, or until `release` (the staging failed). Check and hold are one step: the lock.
   */
  holdForRestore(): { release(): void };
  /** Resolves when the running backup (if any) has finished. */
  idle(): Promise<void>;
  /** Stop the schedule and interrupt a running backup, waiting for its cleanup. */
  close(): Promise<void>;
}

const LAST_RESULT = "backup.last_result";
const LAST_SKIPPED = "backup.last_skipped";

/** The server's backups: the same `backup` use case and backup.lock as `lds backup`, so cron and server never overlap. */
export async function createBackupRunner(options: { dataDir: string; store: Store; logger: Logger; refused?: LdsError }): Promise<BackupRunner> {
  const { dataDir, store, logger, refused } = options;
  let running: { controller: AbortController; promise: Promise<void>; progress: NonNullable<BackupStatus["progress"]> } | null = null;
  let cron: Cron | null = null;
  let drillCron: Cron | null = null;
  let heldForRestore: HeldLock | null = null;
  /** A restore drill under way (scheduled or asked for): staging a restore would cut it off with the restart. */
  let drilling: { startedAt: string } | null = null;
  const readJson = async <T>(name: string): Promise<T | null> => {
    const value = await store.settings.get(name);
    return value ? (JSON.parse(value) as T) : null;
  };

  function start(trigger: Trigger): { startedAt: string } {
    // An engine that cannot back up its volume yet (PostgreSQL): nothing is scheduled, and asking answers why.
    if (refused) throw refused;
    if (running) {
      throw new LdsError("backup_running", `A backup started by ${running.progress.trigger} at ${running.progress.startedAt} is still running.`, {
        hint: `Wait for it to finish; ${action("backup.status")} shows its progress.`,
      });
    }
    if (heldForRestore) throw restoreBeingStaged();
    // Taken before answering, so that a backup run by cron's lds-backup is reported as a conflict right away.
    const lock = lockBackup(dataVolume(dataDir));
    const startedAt = new Date().toISOString();
    const controller = new AbortController();
    const progress = { trigger, startedAt, phase: "starting", bytes: 0, totalBytes: 0 };
    const promise = (async () => {
      try {
        const config = await loadBackupConfig(store);
        const destination = await configuredDestination(config, dataDir, store);
        const result = await backup({
          dataDir,
          destination,
          gzip: config.compression === "gzip",
          encryption: config.encryption.recipients.length ? { recipients: config.encryption.recipients } : undefined,
          keep: config.retention.keep ?? undefined,
          lock,
          signal: controller.signal,
          onProgress: (p) => Object.assign(progress, p),
        });
        await record(success(trigger, startedAt, result));
        logger.info({ archive: result.name, size: result.size, durationMs: result.durationMs, trigger }, "backup finished");
        if (config.drill.schedule === "after-backup") {
          progress.phase = "restore drill";
          await drillArchive(store, logger, dataDir, destination, result.name);
        }
      } catch (err) {
        lock.release();
        const error = isLdsError(err) ? { code: err.code, message: err.message, hint: err.hint } : { code: "internal_error", message: (err as Error).message };
        await record({ trigger, startedAt, finishedAt: new Date().toISOString(), ok: false, durationMs: Date.now() - Date.parse(startedAt), error });
        logger.error({ error, trigger }, "backup failed");
      } finally {
        running = null;
      }
    })();
    running = { controller, promise, progress };
    return { startedAt };
  }

  function holdForRestore(): { release(): void } {
    if (heldForRestore) throw new LdsError("volume_locked", "Another restore is being staged; the server restarts to apply it.", { hint: "Wait for the restart, then check which restore was applied." });
    if (drilling) {
      throw new LdsError("backup_running", `A restore drill (started at ${drilling.startedAt}) is running: staging a restore restarts the server, which would cut it off.`, {
        hint: `Wait for it to finish (${action("backup.status")} shows its outcome), then stage the restore again.`,
      });
    }
    const lock = holdBackupLockForRestore(dataDir, running?.progress ?? null);
    heldForRestore = lock;
    return {
      release() {
        if (heldForRestore !== lock) return;
        lock.release();
        heldForRestore = null;
      },
    };
  }

  /** The run's outcome for the status endpoint; a store that cannot take it is logged, never thrown at the run. */
  async function record(result: LastResult): Promise<void> {
    await store.settings.set(LAST_RESULT, JSON.stringify(result)).catch((err: unknown) => logger.error({ err: String(err) }, "could not record the backup's result"));
    await recordBackupRun(store, result).catch((err: unknown) => logger.error({ err: String(err) }, "could not add the backup to the run history"));
  }

  async function onSchedule(): Promise<void> {
    try {
      start("schedule");
    } catch (err) {
      const reason = isLdsError(err) ? err.message : String(err);
      logger.warn({ reason }, "scheduled backup skipped");
      await store.settings.set(LAST_SKIPPED, JSON.stringify({ at: new Date().toISOString(), reason })).catch((e: unknown) => logger.error({ err: String(e) }, "could not record the skipped backup"));
    }
  }

  async function reschedule(): Promise<void> {
    if (refused) return;
    const config = await loadBackupConfig(store);
    cron?.stop();
    cron = null;
    drillCron?.stop();
    drillCron = null;
    const expression = scheduleCron(config);
    if (expression) cron = new Cron(expression, { timezone: config.schedule.timezone, protect: true }, () => void onSchedule());
    if (config.drill.schedule === "daily") drillCron = new Cron(DAILY_DRILL, { timezone: config.schedule.timezone, protect: true }, () => void drillNewest());
  }

  function startDrill(): void {
    if (refused) throw refused;
    if (running)
      throw new LdsError("backup_running", "A backup is running: ask for the drill once it has finished (with drill.schedule after-backup, the backup drills its own archive).", {
        hint: `Wait for it to finish (${action("backup.status")}), then ask for the drill again.`,
      });
    if (drilling) throw new LdsError("backup_running", `A restore drill (started at ${drilling.startedAt}) is already running.`, { hint: `Its outcome appears in ${action("backup.status")}.` });
    if (heldForRestore) throw restoreBeingStaged();
    void drillNewest();
  }

  /** The daily drill: the newest archive at the destination, unless a backup runs (it drills its own archive). */
  async function drillNewest(): Promise<void> {
    // A restore about to be applied makes the drill moot, and the restart would cut it off.
    if (running || heldForRestore || drilling) return;
    drilling = { startedAt: new Date().toISOString() };
    try {
      await delaypoint("drill-under-way");
      const config = await loadBackupConfig(store);
      const destination = await configuredDestination(config, dataDir, store);
      for await (const newest of destination.list()) {
        await drillArchive(store, logger, dataDir, destination, newest.name);
        return;
      }
    } catch (err) {
      logger.error({ err: String(err) }, "the daily restore drill could not start");
    } finally {
      drilling = null;
    }
  }

  await reschedule();
  return {
    start,
    holdForRestore,
    reschedule,
    status: async () => {
      const lastDrill = await readJson<DrillRecord>(LAST_DRILL);
      return {
        running: running !== null,
        progress: running ? { ...running.progress } : null,
        nextRun: cron?.nextRun()?.toISOString() ?? null,
        lastResult: await readJson<LastResult>(LAST_RESULT),
        lastSkipped: await readJson<BackupStatus["lastSkipped"]>(LAST_SKIPPED),
        lastDrill,
        nextDrill: drillCron?.nextRun()?.toISOString() ?? null,
        warnings: drillWarnings(lastDrill),
      };
    },
    startDrill,
    async idle() {
      await running?.promise;
    },
    async close() {
      cron?.stop();
      drillCron?.stop();
      if (running) {
        running.controller.abort();
        await running.promise;
      }
      heldForRestore?.release();
      heldForRestore = null;
    },
  };
}

function success(trigger: Trigger, startedAt: string, r: BackupResult): LastResult {
  return {
    trigger,
    startedAt,
    finishedAt: new Date().toISOString(),
    ok: true,
    archive: r.name,
    location: r.location,
    size: r.size,
    sha256: r.sha256,
    encryption: r.encryption,
    warnings: r.warnings,
    libraries: r.libraries,
    durationMs: r.durationMs,
    pruned: r.pruned,
    pruneError: r.pruneError,
    incompleteRemoved: r.incompleteRemoved,
    incompleteError: r.incompleteError,
  };
}

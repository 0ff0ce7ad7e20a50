import { Cron } from "croner";
import type { Logger } from "pino";
import { loadBackupConfig, scheduleCron, type BackupConfig } from "./backup-config.js";
import { isLdsError, LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import type { Destination } from "../destinations/destination.js";
import type { ArchiveWarning } from "../archive/archive-warnings.js";
import { drillArchive, drillWarnings, LAST_DRILL, type DrillRecord } from "./scheduled-drill.js";
import type { BackupLockPurpose } from "../locks/volume-locks.js";
import { delaypoint } from "../util/failpoint.js";
import type { HeldLock } from "../locks/lock-file.js";
import { holdBackupLockForRestore, restoreBeingStaged } from "./restore-hold.js";
import { backup, type BackupResult } from "./backup.js";
import type { DatabaseSettings } from "../config/database-settings.js";
import { configuredDestination, unsharedDefaultRefusal } from "./configured-destination.js";
import { action } from "../hints.js";
import { recordBackupRun } from "./backup-history.js";
import { clearStaleProgress, recordedProgress, sharedProgress, type BackupProgress, type Trigger } from "./backup-progress.js";
import { claimSlot, dueTime, type Replica, type SlotKind } from "./backup-slots.js";

export type { Trigger };

/** The daily drill's time: after the default daily backup (03:00), in the schedule's timezone. */
const DAILY_DRILL = "30 4 * * *";
/** How often a replica re-reads the schedule another replica may have changed (the one that saved it reschedules at once). */
const SCHEDULE_POLL_MS = 5000;

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
  /** A backup runs: this server's, or with replicas any replica's (the one holding the backup lock). */
  running: boolean;
  /** With replicas, `replica` names the one running it ("host:pid"). */
  progress: BackupProgress | null;
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
  start(trigger: Trigger): Promise<{ startedAt: string }>;
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

export interface BackupRunnerOptions {
  dataDir: string;
  store: Store;
  logger: Logger;
  /** The engine's backup lock (SQLite: backup.lock; PostgreSQL: an advisory lock): `backup_running` when held. */
  lockBackups(purpose: BackupLockPurpose): Promise<HeldLock>;
  /** With replicas: whether any process holds the backup lock, read without taking it (Engine.backupLockHeld). */
  backupLockHeld?(): Promise<boolean>;
  /**
   * Set when several replicas share the records: each firing of a schedule is claimed by one replica, the running
   * backup's progress is recorded for every replica's status, and the schedule is re-read as other replicas change it.
   */
  replica?: Replica;
  /** The volume's engine and database (config/database-settings.ts). @default SQLite in dataDir */
  database?: DatabaseSettings;
}

/** The server's backups: the same `backup` use case and lock as `lds backup`, so cron and server never overlap. */
export async function createBackupRunner(options: BackupRunnerOptions): Promise<BackupRunner> {
  const { dataDir, store, logger, replica, lockBackups, backupLockHeld, database } = options;
  let running: { controller: AbortController; promise: Promise<void>; progress: BackupProgress } | null = null;
  let cron: Cron | null = null;
  let drillCron: Cron | null = null;
  let heldForRestore: HeldLock | null = null;
  /** A restore drill under way (scheduled or asked for): staging a restore would cut it off with the restart. */
  let drilling: { startedAt: string } | null = null;
  let scheduled: string | null = null;
  let schedulePoll: NodeJS.Timeout | null = null;
  const readJson = async <T>(name: string): Promise<T | null> => {
    const value = await store.settings.get(name);
    return value ? (JSON.parse(value) as T) : null;
  };

  async function start(trigger: Trigger): Promise<{ startedAt: string }> {
    if (running) throw backupRunning(running.progress);
    if (heldForRestore) throw restoreBeingStaged();
    const startedAt = new Date().toISOString();
    const controller = new AbortController();
    const progress: BackupProgress = { trigger, startedAt, phase: "starting", bytes: 0, totalBytes: 0, ...(replica ? { replica: replica.name } : {}) };
    // Claimed before the lock's round trip: a second start here meanwhile is refused, not raced.
    let ended!: () => void;
    running = { controller, promise: new Promise<void>((resolve) => (ended = resolve)), progress };
    let config: BackupConfig;
    let destination: Destination | undefined;
    let refusal: LdsError | undefined;
    try {
      config = await loadBackupConfig(store);
      // A destination this volume refuses whatever its state (its own folder, with a database replicas share) is the
      // request's validation_error, not an accepted backup that fails in the background, at every firing too.
      refusal = trigger === "api" ? unsharedDefaultRefusal(config, dataDir, database) : undefined;
      if (!refusal) destination = await configuredDestination(config, dataDir, store, database);
    } catch (err) {
      running = null;
      ended();
      // Anything else (the destination unreachable, or no longer a folder) is a failed backup, recorded in the history
      // as a run that failed, so that the overview warns of it whoever asked; a firing has no one to answer anyway.
      await failed(trigger, startedAt, err);
      return { startedAt };
    }
    if (refusal || !destination) {
      running = null;
      ended();
      throw refusal ?? new LdsError("internal_error", "The backup destination could not be resolved.", { hint: "Report it: the configuration was read but named no destination." });
    }
    let lock: HeldLock;
    try {
      // Taken before answering, so that a backup run elsewhere (cron's lds-backup, another replica) is a conflict now.
      lock = await lockBackups("backup");
    } catch (err) {
      running = null;
      ended();
      throw replica && isLdsError(err, "backup_running") ? await runningElsewhere(err) : err;
    }
    const shared = replica ? sharedProgress(store, logger) : undefined;
    // Recorded before answering: a replica asked for a backup now names this one.
    await shared?.update(progress);
    // With replicas the lock is held until the progress is cleared (through an after-backup drill): the others see
    // "running" exactly while it is held, and a backup started elsewhere next is never cleared by this one's end.
    const backupLock: HeldLock = replica ? { file: lock.file, setPurpose: (purpose) => lock.setPurpose(purpose), release: () => {} } : lock;
    void (async () => {
      try {
        await delaypoint("backup-under-way", 10_000);
        const result = await backup({
          dataDir,
          database,
          destination,
          gzip: config.compression === "gzip",
          encryption: config.encryption.recipients.length ? { recipients: config.encryption.recipients } : undefined,
          keep: config.retention.keep ?? undefined,
          lock: backupLock,
          signal: controller.signal,
          onProgress: (p) => void shared?.update(Object.assign(progress, p)),
        });
        await record(success(trigger, startedAt, result));
        logger.info({ archive: result.name, size: result.size, durationMs: result.durationMs, trigger }, "backup finished");
        if (config.drill.schedule === "after-backup") {
          progress.phase = "restore drill";
          void shared?.update(progress);
          await drillArchive(store, logger, dataDir, destination, result.name);
        }
      } catch (err) {
        await backupLock.release();
        await failed(trigger, startedAt, err);
      } finally {
        await shared?.clear();
        if (replica) await lock.release();
        running = null;
        ended();
      }
    })();
    return { startedAt };
  }

  /** A backup that failed: its outcome recorded for the status and history, and logged. */
  async function failed(trigger: Trigger, startedAt: string, err: unknown): Promise<void> {
    const error = isLdsError(err) ? { code: err.code, message: err.message, hint: err.hint } : { code: "internal_error", message: (err as Error).message };
    await record({ trigger, startedAt, finishedAt: new Date().toISOString(), ok: false, durationMs: Date.now() - Date.parse(startedAt), error });
    logger.error({ error, trigger }, "backup failed");
  }

  /** A backup of another replica holds the lock: named from the progress it records. */
  async function runningElsewhere(err: LdsError): Promise<LdsError> {
    const other = await recordedProgress(store).catch(() => null);
    return other?.replica ? backupRunning(other) : err;
  }

  /**
   * With replicas, the backup another replica runs: its recorded progress, if the backup lock is held (looked up, not
   * taken: taking it would refuse a backup started at that moment). A replica that died mid-backup left its progress
   * behind but no lock (its connection ended with it): nothing runs then, and the stale row is cleared.
   */
  async function progressElsewhere(): Promise<BackupProgress | null> {
    const recorded = await recordedProgress(store);
    if (!recorded || !backupLockHeld) return null;
    if (await backupLockHeld()) return recorded;
    await clearStaleProgress(store, recorded);
    return null;
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

  /**
   * With replicas every replica's cron fires: the one that claims the firing (by the time it was due) runs it, the
   * others note who did. A claim that cannot be made (the database is unreachable) runs nothing: logged.
   */
  async function claimed(kind: SlotKind, due: Date): Promise<boolean> {
    if (!replica) return true;
    try {
      const claim = await claimSlot(store, kind, due, replica);
      if (claim.won) return true;
      logger.info({ slot: due.toISOString(), replica: claim.holder }, `scheduled ${kind === "backup" ? "backup" : "restore drill"}: slot taken by replica ${claim.holder}`);
    } catch (err) {
      logger.error({ err: String(err), slot: due.toISOString() }, `could not claim the scheduled ${kind === "backup" ? "backup" : "restore drill"}'s slot; it runs at the next one`);
    }
    return false;
  }

  async function onSchedule(due: Date): Promise<void> {
    if (!(await claimed("backup", due))) return;
    try {
      await start("schedule");
    } catch (err) {
      const reason = isLdsError(err) ? err.message : String(err);
      logger.warn({ reason }, "scheduled backup skipped");
      await store.settings.set(LAST_SKIPPED, JSON.stringify({ at: new Date().toISOString(), reason })).catch((e: unknown) => logger.error({ err: String(e) }, "could not record the skipped backup"));
    }
  }

  async function reschedule(): Promise<void> {
    const config = await loadBackupConfig(store);
    scheduled = scheduleOf(config);
    cron?.stop();
    cron = null;
    drillCron?.stop();
    drillCron = null;
    const expression = scheduleCron(config);
    if (expression) cron = new Cron(expression, { timezone: config.schedule.timezone, protect: true }, (self: Cron) => void onSchedule(dueTime(self)));
    if (config.drill.schedule === "daily") drillCron = new Cron(DAILY_DRILL, { timezone: config.schedule.timezone, protect: true }, (self: Cron) => void scheduledDrill(dueTime(self)));
  }

  /** With replicas: a schedule saved on another replica is followed within the poll's interval. */
  function followSchedule(): void {
    schedulePoll = setInterval(() => {
      void loadBackupConfig(store)
        .then((config) => (scheduleOf(config) === scheduled ? undefined : reschedule()))
        .catch((err: unknown) => logger.warn({ err: String(err) }, "could not re-read the backup schedule; the next poll tries again"));
    }, SCHEDULE_POLL_MS);
    schedulePoll.unref();
  }

  async function scheduledDrill(due: Date): Promise<void> {
    if (await claimed("drill", due)) await drillNewest();
  }

  function startDrill(): void {
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
      const destination = await configuredDestination(config, dataDir, store, database);
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
  if (replica) followSchedule();
  return {
    start,
    holdForRestore,
    reschedule,
    status: async () => {
      const lastDrill = await readJson<DrillRecord>(LAST_DRILL);
      const progress = running ? { ...running.progress } : replica ? await progressElsewhere() : null;
      return {
        running: progress !== null,
        progress,
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
      if (schedulePoll) clearInterval(schedulePoll);
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

function backupRunning(progress: BackupProgress): LdsError {
  const where = progress.replica ? ` on replica ${progress.replica}` : "";
  return new LdsError("backup_running", `A backup started by ${progress.trigger}${where} at ${progress.startedAt} is still running (${progress.phase}).`, {
    hint: `Wait for it to finish; ${action("backup.status")} shows its progress.`,
  });
}

/** What of the configuration decides when backups and drills run: a change on another replica reschedules here. */
function scheduleOf(config: BackupConfig): string {
  return JSON.stringify([scheduleCron(config), config.schedule.timezone, config.drill.schedule]);
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

import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pino, { type Logger } from "pino";
import { hashPassword } from "../admin/passwords.js";
import { dataVolume, type DataVolume } from "../config/data-volume.js";
import { fromSystemError, isLdsError } from "../errors.js";
import { serverSettingsFromEnv, type ServerSettings } from "../config/server-settings.js";
import { licenceReader, loadLicence } from "../licence/licence.js";
import { buildApp } from "./app.js";
import type { HeldLock, LockOwner } from "../volume/lock-file.js";
import { runHeavyWorkOffThread } from "../ops/heavy-work.js";
import { allowCollectionPauses } from "../util/young-garbage.js";
import { lockVolumeExclusive, waitUntilAlone } from "../volume/volume-locks.js";
import { exists } from "../util/files.js";
import { createBackupRunner } from "../ops/backup-runner.js";
import { createJobRunner } from "../ops/job-runner.js";
import { createUsageRecorder } from "../ops/usage-recorder.js";
import { rebuildInBackground } from "../ops/background-rebuild.js";
import { purgeRetiredBatches } from "../indexing/purge-retired.js";
import { startSnippetWriterThread, type SnippetWriterThread } from "../volume/snippet-writer-thread.js";
import { liveVolumeUsers } from "../volume/volume-users.js";
import { embedderFor } from "../vectors/embedder-for.js";
import { ensureDirectory, openVolume, type OpenVolume } from "../volume/open-volume.js";
import { rebuildStaleVectors } from "../ops/rebuild-stale-vectors.js";
import { createVectorSearchWorker, MIN_CACHED_VECTORS } from "../vectors/knn-worker.js";
import { twoSearchThreads } from "../vectors/search-threads.js";
import type { CopyMade } from "../vectors/partition-cache.js";
import type { WordIndexMade } from "../store/word-search.js";
import { warmVectorCopies } from "../ops/warm-vector-copies.js";
import { partitionLibrary } from "../vectors/vector-index.js";
import { describeRecovery, recoverInterruptedRestore } from "../ops/restore-journal.js";
import { applyStagedRestore } from "../ops/staged-restore.js";
import { outcomeRecord, recordRestoreOutcome, type RestoreOutcome } from "../ops/restore-outcome.js";

export interface ServeOptions {
  dataDir: string;
  /** @default "127.0.0.1" */
  host?: string;
  /** @default 3000 */
  port?: number;
  logger?: Logger;
  /** The server's settings, parsed once by config/server-settings.ts. @default from process.env */
  settings?: ServerSettings;
}

export interface RunningServer {
  url: string;
  logger: Logger;
  /** Resolves with the reason when the server asks to be restarted (a staged restore). */
  restartRequested: Promise<string>;
  /** Stop accepting requests, finish those in flight, stop backups, close the volume, release server.lock. */
  close(): Promise<void>;
}

/** Take the volume, apply a staged or interrupted restore, open it and listen. Each step undoes the earlier ones on failure. */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const settings = options.settings ?? serverSettingsFromEnv(process.env);
  const logger = options.logger ?? createLogger(settings.logLevel);
  const volume = dataVolume(options.dataDir);
  ensureDirectory(volume.root);
  const lock = await takeVolume(volume, settings.restartWaitMs);
  runHeavyWorkOffThread(true);
  allowCollectionPauses(false);
  let opened: OpenVolume | undefined;
  let writer: SnippetWriterThread | undefined;
  try {
    // Replacing files needs the volume alone: commands that entered it before the lock was taken must be gone. A
    // backup (cron's lds-backup, say, between the old server's exit and this start) is waited for, however long.
    if (exists(volume.restoreJournal) || exists(volume.restoreStaged)) {
      const task = exists(volume.restoreJournal) ? "finishing the interrupted restore" : "applying the staged restore";
      await waitUntilAlone(volume, lock, { task, othersTimeoutMs: 60_000, onWaiting: (line, backups, waitedMs) => logWaiting(logger, line, backups, waitedMs) });
    }
    for (const line of describeRecovery(recoverInterruptedRestore(volume))) logger.warn(line);
    const restored = await applyStaged(volume, logger);
    fs.rmSync(path.join(volume.root, "restore-uploads"), { recursive: true, force: true });
    opened = openVolume(volume.root, embedderFor(settings.embeddings), { mappedReads: true });
    // Snippet batches left unfinished by a process that is gone (a crash, or an archive taken mid-ingestion) are
    // finished by nobody: retired, to be deleted, unless a command that may be writing one is still running.
    if (liveVolumeUsers(volume).length === 0) await opened.store.snippets.retireUnfinished();
    // From here commands may open the volume beside the server.
    lock.setPurpose("server");
    // A local embedder rebuilds a stale index in seconds, before serving; a remote provider's rebuild runs while
    // the server serves, with BM25 alone ranking meanwhile.
    const background = opened.embedder.remote ? rebuildInBackground(opened, logger) : undefined;
    if (!background) await rebuildStaleVectors(opened, logger);
    // Vectors and word indexes on threads of their own, so that a fused search's two rankings run side by side.
    opened.vectorSearch = twoSearchThreads(
      createVectorSearchWorker(volume.vectors, settings.searchTimeoutMs, { budgetBytes: settings.vectorCacheBytes, minVectors: MIN_CACHED_VECTORS }, (copy) =>
        logVectorCopy(logger, copy, settings.vectorCacheBytes),
      ),
      createVectorSearchWorker(volume.vectors, settings.searchTimeoutMs, { budgetBytes: 0, minVectors: MIN_CACHED_VECTORS }, () => {}, {
        storeFile: volume.db,
        options: { budgetBytes: settings.wordIndexBytes, minRows: MIN_CACHED_VECTORS },
        onIndex: (made) => logWordIndex(logger, made, settings.wordIndexBytes),
      }),
    );
    // In the background: the server answers meanwhile (the first searches scan, as before).
    void warmVectorCopies(opened, settings.vectorCacheBytes).catch((err: Error) => logger.warn({ err: err.message }, "vector search: copying large libraries' vectors at start failed; they are copied at their first search instead"));
    const checkpointer = opened.checkpointInThread((err) =>
      logger.warn({ err: err.message }, "WAL checkpoints run inside requests again (the checkpoint thread stopped); requests may wait on the disk meanwhile. Restart the server to move them back to their thread."),
    );
    opened.snippetWriter = writer = startSnippetWriterThread(volume, opened, (err) =>
      logger.warn({ err: err.message }, "Ingestion writes run on the event loop again (the snippet writer thread stopped); requests may wait on the disk while a library is refreshed. Restart the server to move them back to their thread."),
    );
    if (restored) await recordRestoreOutcome(opened.store, restored);
    await bootstrapAdmin(opened, settings.firstAdmin, logger);
    const runner = await createBackupRunner({ dataDir: volume.root, store: opened.store, logger });
    const gitPolicy = settings.git;
    const jobs = await createJobRunner({ volume: opened, logger, gitPolicy, concurrency: settings.jobConcurrency });
    const usage = createUsageRecorder(opened.store, logger);
    // Snippet batches replaced or left unfinished before a stop are deleted while the server serves, a chunk at a time.
    const stopPurge = new AbortController();
    const purge = purgeRetiredBatches(opened, stopPurge.signal).catch((err) => logger.warn({ err: (err as Error).message }, "Deleting replaced snippets failed; the next ingestion or start tries again."));
    let requestRestart: (reason: string) => void = () => {};
    const restartRequested = new Promise<string>((resolve) => (requestRestart = resolve));
    const app = buildApp({
      volume: opened,
      jobs,
      usage,
      publicApi: {
        limits: settings.planLimits,
        unauthenticatedPerMinute: settings.unauthenticatedPerMinute,
        publicRead: settings.publicRead,
        anonymousPerMinute: settings.anonymousPerMinute,
        refreshLimits: settings.refreshLimits,
        gitPolicy,
      },
      logger,
      runner,
      licence: licenceReader(volume.root, settings.licence),
      requestRestart: (reason) => requestRestart(reason),
      settings: {
        sessionTtlSeconds: settings.sessionTtlSeconds,
        loginAttemptsPerMinute: settings.loginAttemptsPerMinute,
        uploadLimitBytes: settings.uploadLimitBytes,
        trustProxy: settings.trustProxy,
      },
    });
    const host = options.host ?? "127.0.0.1";
    const port = options.port ?? 3000;
    try {
      await app.listen({ host, port });
    } catch (err) {
      await app.close();
      await runner.close();
      await jobs.close();
      await usage.close();
      stopPurge.abort();
      await purge;
      await writer.close();
      await background?.close();
      await checkpointer.close();
      await opened.vectorSearch.close();
      throw fromSystemError(err, `${host}:${port}`);
    }
    const address = app.server.address();
    const url = typeof address === "object" && address ? `http://${host}:${address.port}` : `http://${host}:${port}`;
    const licence = loadLicence(volume.root, settings.licence);
    logger.info({ dataDir: volume.root, url, licence: licence.state, licenceExpiresAt: licence.expiresAt }, "LDS is serving");
    if (!(await opened.store.apiKeys.hasActive())) {
      logger.warn({ next: `lds init --email you@example.com --data-dir ${volume.root}` }, "No API key exists yet: create the first team, owner and key with `lds init --email EMAIL` (docs/api.md), then submit a repository with it.");
    }
    const handle = opened;
    return {
      url,
      logger,
      restartRequested,
      async close() {
        await app.close();
        await runner.close();
        await jobs.close();
        await usage.close();
        stopPurge.abort();
        await purge;
        await writer?.close();
        await background?.close();
        await checkpointer.close();
        await handle.vectorSearch?.close();
        handle.close();
        lock.release();
        logger.info("LDS stopped");
      },
    };
  } catch (err) {
    await writer?.close();
    await opened?.vectorSearch?.close();
    opened?.close();
    lock.release();
    throw err;
  }
}

async function takeVolume(volume: DataVolume, waitMs: number): Promise<HeldLock> {
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

/** The first admin, from LDS_ADMIN_PASSWORD(_FILE) (username LDS_ADMIN_USERNAME, default "admin"), only while there is none. */
async function bootstrapAdmin(opened: OpenVolume, firstAdmin: ServerSettings["firstAdmin"], logger: Logger): Promise<void> {
  const { username, password } = firstAdmin;
  if (!password || (await opened.store.admins.count()) > 0) return;
  await opened.store.admins.create(username, await hashPassword(password));
  logger.warn({ username }, "Created the first admin from LDS_ADMIN_PASSWORD(_FILE); remove it from the service's settings now.");
}

/** JSON logs on stdout; secrets are redacted should a header or a config body ever be logged. */
export function createLogger(level = "info"): Logger {
  return pino({
    level,
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", "*.gitToken", "*.secretAccessKey", "*.password"],
      censor: "[redacted]",
    },
  });
}

/** The search thread's copies of large libraries' vectors (vectors/partition-search.ts): ready, or too large. */
function logWordIndex(logger: Logger, made: WordIndexMade, budgetBytes: number): void {
  const mib = (bytes: number) => Math.ceil(bytes / 2 ** 20);
  const library = made.libraryId + (made.version ? `@${made.version}` : "");
  if (made.failed) {
    logger.warn({ library, err: made.failed }, "search: building a word index failed; BM25 rankings of this library are computed by SQLite (slower, same answers). A restart or the next refresh of the library tries again.");
    return;
  }
  if (!made.overBudget) {
    logger.info({ library, snippets: made.rows, mib: mib(made.bytes), seconds: made.ms / 1000 }, "search: a word index of a large library is ready; its BM25 rankings use it from now on");
    return;
  }
  logger.warn(
    { library, snippetsRead: made.rows, budgetMib: mib(budgetBytes) },
    `search: the word index of ${library} needs more than the ${mib(budgetBytes)} MiB of LDS_WORD_INDEX_MB, so its BM25 rankings are computed by SQLite (several times slower). Raise LDS_WORD_INDEX_MB (an index takes about ${Math.round(made.bytes / Math.max(1, made.rows))} bytes per snippet) and restart the server to speed them up.`,
  );
}

function logVectorCopy(logger: Logger, copy: CopyMade, budgetBytes: number): void {
  const mib = (bytes: number) => Math.ceil(bytes / 2 ** 20);
  const library = partitionLibrary(copy.partition);
  if (!copy.overBudget) {
    logger.info({ library, vectors: copy.vectors, mib: mib(copy.bytes), seconds: copy.ms / 1000 }, "vector search: an in-memory copy of a large library's vectors is ready; its searches use it from now on");
    return;
  }
  logger.warn(
    { library, vectorsRead: copy.vectors, budgetMib: mib(budgetBytes) },
    `vector search: the vectors of ${library} need more than the ${mib(budgetBytes)} MiB of LDS_VECTOR_CACHE_MB for an in-memory copy, so its searches scan the stored vectors (several times slower). Raise LDS_VECTOR_CACHE_MB (a copy takes ${Math.round(copy.bytes / Math.max(1, copy.vectors))} bytes per snippet) and restart the server to speed them up.`,
  );
}

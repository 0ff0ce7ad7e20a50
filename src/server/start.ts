import type { Logger } from "pino";
import { dataVolume } from "../config/data-volume.js";
import { chooseEngine, requireEngineWork } from "../engine/choose-engine.js";
import { fromSystemError } from "../errors.js";
import { serverSettingsFromEnv, type ServerSettings } from "../config/server-settings.js";
import { licenceReader, loadLicence } from "../licence/licence.js";
import { buildApp } from "./app.js";
import { bootstrapAdmin } from "./first-admin.js";
import { createLogger } from "./logger.js";
import { startSearchThreads } from "./search-threads-at-start.js";
import { finishRestores, takeVolume } from "./volume-at-start.js";
import { runHeavyWorkOffThread } from "../ops/heavy-work.js";
import { allowCollectionPauses } from "../util/young-garbage.js";
import { limitHeapGrowth } from "./heap-growth.js";
import { resourceStack } from "../util/resource-stack.js";
import { createBackupRunner } from "../ops/backup-runner.js";
import { thisReplica } from "../ops/backup-slots.js";
import { createJobRunner } from "../ops/job-runner.js";
import { createUsageRecorder } from "../ops/usage-recorder.js";
import { rebuildInBackground } from "../ops/background-rebuild.js";
import { purgeRetiredBatches } from "../indexing/purge-retired.js";
import { startSnippetWriterThread } from "../volume/snippet-writer-thread.js";
import { liveVolumeUsers } from "../locks/volume-users.js";
import { embedderFor } from "../vectors/embedder-for.js";
import { ensureDirectory, openVolume } from "../volume/open-volume.js";
import { rebuildStaleVectors } from "../ops/rebuild-stale-vectors.js";
import { warmVectorCopies } from "../ops/warm-vector-copies.js";
import { recordRestoreOutcome } from "../ops/restore-outcome.js";

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

/**
 * Take the volume, apply a staged or interrupted restore, open it and listen. Every resource taken registers its
 * closer on one stack as soon as it is held: a step that fails closes what the earlier ones took, and `close()`
 * unwinds the same stack, so the order (last taken, first closed) is written once. The registration order is the
 * shutdown order reversed: requests stop first, then backups, jobs, usage, the purge, the writer thread, the
 * background rebuild, checkpoints, the search threads, the volume, and last server.lock.
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const settings = options.settings ?? serverSettingsFromEnv(process.env);
  const logger = options.logger ?? createLogger(settings.logLevel);
  const volume = dataVolume(options.dataDir, settings.database);
  // Before taking anything: an engine that cannot serve (has no search index) is refused here.
  const engine = chooseEngine(volume);
  requireEngineWork(engine, "search", "lds serve");
  ensureDirectory(volume.root);
  // server.lock guards this data directory (on PostgreSQL: the replica's own search files), never the records of
  // other replicas, which share them from other directories and hosts.
  const lock = await takeVolume(volume, settings.restartWaitMs);
  runHeavyWorkOffThread(true);
  allowCollectionPauses(false);
  limitHeapGrowth();
  const resources = resourceStack();
  resources.defer(() => lock.release());
  try {
    const restored = await finishRestores(volume, lock, logger);
    const opened = await openVolume(volume.root, embedderFor(settings.embeddings), {
      mappedReads: true,
      engine: volume.engine,
      command: "lds serve",
      onBackgroundError: (err) => logger.warn({ err: err.message }, "search: following the database's snippet batches failed; the next notice or poll tries again"),
    });
    resources.defer(() => opened.close());
    // Snippet batches left unfinished by a process that is gone (a crash, or an archive taken mid-ingestion) are
    // finished by nobody: retired, to be deleted, unless a command that may be writing one is still running. With
    // replicas, only those whose job's lease has passed: the others are being written by a live replica.
    if (engine.sharedByReplicas) await opened.store.snippets.retireAbandonedBatches();
    else if (liveVolumeUsers(volume).length === 0) await opened.store.snippets.retireUnfinishedAsSoleWriter();
    // From here commands may open the volume beside the server.
    lock.setPurpose("server");
    // A local embedder rebuilds a stale index in seconds, before serving; a remote provider's rebuild runs while
    // the server serves (started below), with BM25 alone ranking meanwhile.
    if (!opened.embedder.remote) await rebuildStaleVectors(opened, logger);
    const search = startSearchThreads(opened, settings, logger);
    resources.defer(() => search.stop());
    // In the background: the server answers meanwhile (the first searches scan, as before).
    void warmVectorCopies(opened, settings.vectorCacheBytes).catch((err: Error) =>
      logger.warn({ err: err.message }, "vector search: copying large libraries' vectors at start failed; they are copied at their first search instead"),
    );
    const checkpointer = opened.checkpointInThread((err) =>
      logger.warn(
        { err: err.message },
        "WAL checkpoints run inside requests again (the checkpoint thread stopped); requests may wait on the disk meanwhile. Restart the server to move them back to their thread.",
      ),
    );
    resources.defer(() => checkpointer.close());
    if (opened.embedder.remote) {
      const background = rebuildInBackground(opened, logger);
      resources.defer(() => background.close());
    }
    // With replicas an ingestion writes inline (volume/snippet-writer.ts): the rows and their vectors go to the
    // shared records in one transaction, and each replica's search files follow them (no local disk write to wait on).
    if (!engine.sharedByReplicas) {
      const writer = (opened.snippetWriter = startSnippetWriterThread(volume, opened, (err) =>
        logger.warn(
          { err: err.message },
          "Ingestion writes run on the event loop again (the snippet writer thread stopped); requests may wait on the disk while a library is refreshed. Restart the server to move them back to their thread.",
        ),
      ));
      resources.defer(() => writer.close());
    }
    if (restored) await recordRestoreOutcome(opened.store, restored);
    await bootstrapAdmin(opened, settings.firstAdmin, logger);
    // Snippet batches replaced or left unfinished before a stop are deleted while the server serves, a chunk at a time.
    const stopPurge = new AbortController();
    const purge = purgeRetiredBatches(opened, stopPurge.signal).catch((err) => logger.warn({ err: (err as Error).message }, "Deleting replaced snippets failed; the next ingestion or start tries again."));
    resources.defer(() => (stopPurge.abort(), purge));
    const usage = createUsageRecorder(opened.store, logger);
    resources.defer(() => usage.close());
    const gitPolicy = settings.git;
    // SQLite: the server holds server.lock on its own lds.db, the only process running jobs on it (soleProcess).
    // Replicas claim jobs under leases, and reclaim a dead one's once its lease passes.
    const jobs = await createJobRunner({ volume: opened, logger, gitPolicy, concurrency: settings.jobConcurrency, leaseMs: settings.jobLeaseMs, soleProcess: !engine.sharedByReplicas });
    resources.defer(() => jobs.close());
    // Replicas each run the schedule's cron: one claims each firing, and every one shows the running backup.
    const runner = await createBackupRunner({
      dataDir: volume.root,
      store: opened.store,
      logger,
      lockBackups: (purpose) => engine.lockBackups(volume, purpose),
      backupLockHeld: engine.backupLockHeld?.bind(engine, volume),
      replica: engine.sharedByReplicas ? thisReplica() : undefined,
      database: volume.engine,
    });
    resources.defer(() => runner.close());
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
    resources.defer(() => app.close());
    const host = options.host ?? "127.0.0.1";
    const port = options.port ?? 3000;
    try {
      await app.listen({ host, port });
    } catch (err) {
      throw fromSystemError(err, `${host}:${port}`);
    }
    const address = app.server.address();
    const url = typeof address === "object" && address ? `http://${host}:${address.port}` : `http://${host}:${port}`;
    const licence = loadLicence(volume.root, settings.licence);
    logger.info({ dataDir: volume.root, url, licence: licence.state, licenceExpiresAt: licence.expiresAt }, "LDS is serving");
    if (!(await opened.store.apiKeys.hasActive())) {
      logger.warn(
        { next: `lds init --email you@example.com --data-dir ${volume.root}` },
        "No API key exists yet: create the first team, owner and key with `lds init --email EMAIL` (docs/api.md), then submit a repository with it.",
      );
    }
    return {
      url,
      logger,
      restartRequested,
      async close() {
        await resources.unwind();
        logger.info("LDS stopped");
      },
    };
  } catch (err) {
    // What the failed start took is closed; a closer's own failure is logged, the start's error is the one reported.
    await resources.unwind().catch((closeErr: Error) => logger.warn({ err: closeErr.message }, "closing what a failed start had opened failed"));
    throw err;
  }
}

import { randomBytes } from "node:crypto";
import os from "node:os";
import type { Logger } from "pino";
import { describeFailure, LdsError } from "../errors.js";
import type { GitUrlPolicy } from "../config/git-settings.js";
import { checkRepositoryUrl } from "../sources/git-url.js";
import type { ClaimedJob, Library } from "../store/records.js";
import { keepLease, leaseWasLost, recordsUnreachable, runnerOwnerId } from "./job-lease.js";
import { recordedFailure } from "./failure-reason.js";
import { connectedGitAuth, type GitAuth } from "./git-connection.js";
import { ingestGitRepository } from "./ingest-git.js";
import { ingestWikiSpace } from "./ingest-wiki.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { action } from "../hints.js";

export interface JobRunnerOptions {
  volume: OpenVolume;
  logger: Logger;
  /** Jobs run at the same time. @default 2 (the machine has two cores) */
  concurrency?: number;
  /** How often the queue is looked at when nothing kicked it. @default 1000 ms */
  pollMs?: number;
  gitPolicy?: GitUrlPolicy;
  /**
   * This process alone runs jobs on these records (a server on its own lds.db, under server.lock): jobs left
   * running by its last run are queued again at once. False on a shared database: another replica's running jobs
   * are its own, and a dead replica's are reclaimed once their leases pass.
   */
  soleProcess: boolean;
  /** How long a claimed job is held without a heartbeat (LDS_JOB_LEASE_MS). @default 30000 */
  leaseMs?: number;
  /** How often a running job's lease is renewed. @default a third of the lease (tests lengthen it to let a lease pass) */
  heartbeatMs?: number;
}

export interface JobRunner {
  /** Look at the queue now (after a submission), instead of at the next poll. */
  kick(): void;
  /** Resolves when no job runs and none is queued. */
  drained(): Promise<void>;
  close(): Promise<void>;
}

/** Runs queued ingestion and refresh jobs in the background, a bounded number at a time. */
export async function createJobRunner(options: JobRunnerOptions): Promise<JobRunner> {
  const { volume, logger } = options;
  const { store } = volume;
  const concurrency = options.concurrency ?? 2;
  const running = new Map<number, Promise<void>>();
  let closed = false;
  const leaseMs = options.leaseMs ?? 30_000;
  const heartbeatMs = options.heartbeatMs ?? Math.floor(leaseMs / 3);
  // Whose claims these are: another replica (or another runner in this process) never passes for this one.
  const owner = runnerOwnerId(os.hostname(), process.pid, randomBytes(4).toString("hex"));
  // Shutdown interrupts running jobs (git is killed): a sole process queues them again at its next start; on a
  // shared database they are given back to the queue for another replica (reclaimed once their leases pass if that fails).
  const shutdown = new AbortController();
  if (options.soleProcess) {
    const requeued = await store.jobs.requeueRunningAsSoleProcess();
    if (requeued) logger.warn({ requeued }, "re-queued jobs interrupted by the last shutdown");
  }

  const run = async (job: ClaimedJob, heldSince: number) => {
    const log = logger.child({ job: job.id, library: job.libraryId, kind: job.kind, attempt: job.attempts });
    const lease = { jobId: job.id, owner };
    const keeper = keepLease(store.jobs, lease, { leaseMs, heartbeatMs, heldSince }, log);
    // The job's work stops at shutdown, and as soon as its lease is lost.
    const signal = AbortSignal.any([shutdown.signal, keeper.signal]);
    /** Fenced: a job another runner holds now is left to it. */
    const finish = async (error: string | null) => {
      keeper.stop();
      const finished = await store.jobs.finish(job.id, owner, error);
      if (!finished) log.warn("job not finished by this runner: another runner holds it now");
      return finished;
    };
    try {
      const payload = job.payload;
      if (payload.source === "wiki") {
        const result = await ingestWikiSpace({ volume, libraryId: job.libraryId, ...payload, signal, lease });
        if (await finish(null)) log.info(result, "job finished");
        return;
      }
      const library = await store.libraries.find(job.libraryId);
      if (!library) return void (await finish("library_not_found: the library was removed"));
      // Jobs queued by older releases (a restored archive) may lack the URL: the library's source is the truth.
      const repositoryUrl = payload.url ?? library.sourceUrl;
      if (!repositoryUrl) {
        throw new LdsError(
          "repository_url_invalid",
          `${job.libraryId} records no repository URL (it was indexed by LDS 0.1), so it cannot be re-indexed; it keeps its snippets. An operator can move the library to its repository.`,
          {
            hint: `Point it at its repository: ${action("library.move", { id: job.libraryId })}.`,
          },
        );
      }
      const given = await store.jobs.token(job.id);
      const auth = given ? { token: given } : await connectedAuth(library, repositoryUrl, payload.teamId);
      const result = await ingestGitRepository({
        volume,
        libraryId: job.libraryId,
        repositoryUrl,
        branch: payload.branch,
        version: payload.version,
        token: auth.token,
        renewToken: auth.renew,
        skipVersionFiltering: payload.skipVersionFiltering,
        generateDocs: payload.generateDocs,
        signal,
        lease,
        ...options.gitPolicy,
      });
      if (await finish(null)) log.info({ snippets: result.snippets, commit: result.commit, unchanged: result.unchanged }, "job finished");
    } catch (err) {
      if (shutdown.signal.aborted) {
        if (options.soleProcess) return log.info("job interrupted by shutdown; it runs again at the next start");
        // Queued again now, so that another replica takes the job at once instead of after the lease, and without
        // this claim counting as an attempt: the job did not fail, and rolling restarts must not use its attempts up.
        keeper.stop();
        const givenBack = await store.jobs.giveBack(job.id, owner).catch(() => false);
        return log.info(givenBack ? "job interrupted by shutdown; it was given back for another replica to take it now" : "job interrupted by shutdown; another replica takes it once its lease passes");
      }
      // Logged by the lease keeper, or refused at publication: the runner holding the job now records its outcome.
      if (leaseWasLost(err, signal)) return log.warn("job stopped: this runner lost its lease; it is not finished here");
      if (recordsUnreachable(err)) return log.warn({ reason: describeFailure(err) }, "job stopped: the database could not be reached; it runs again once its lease passes");
      const reason = describeFailure(err);
      if (!(await finish(reason))) return;
      // Failures before the ingestion started (it records its own) must not leave the library "queued" forever.
      if ((await store.libraries.find(job.libraryId))?.state === "queued") await store.libraries.setState(job.libraryId, "failed", recordedFailure(err, volume.paths.root));
      log.warn({ reason }, "job failed");
    } finally {
      keeper.stop();
    }
  };

  /** A private library's team connection, only if it is pinned to the repository's host (never sent elsewhere). */
  const connectedAuth = async (library: Library, url: string, teamId: number | undefined): Promise<GitAuth> =>
    library.private && teamId ? connectedGitAuth(store, library.teamId ?? teamId, checkRepositoryUrl(url, options.gitPolicy).host, options.gitPolicy) : {};

  // One claiming loop at a time (claims are awaited, and two loops could both see a free slot); a kick during a
  // loop makes it look at the queue once more, so that a job queued meanwhile does not wait for the next poll.
  let claiming = false;
  let again = false;
  const pump = async () => {
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    try {
      do {
        again = false;
        while (!closed && running.size < concurrency) {
          const heldSince = Date.now();
          const job = await store.jobs.claimNext(owner, leaseMs);
          if (!job) break;
          // A job's own errors are handled in run; one that escapes (its finish failed: the database went away) is
          // logged here, never left to end the process as an unhandled rejection.
          const promise = run(job, heldSince)
            .catch((err: unknown) => logger.error({ job: job.id, err: describeFailure(err) }, "a job stopped without being finished; it runs again once its lease passes"))
            .finally(() => {
              running.delete(job.id);
              void pump();
            });
          running.set(job.id, promise);
        }
      } while (again && !closed);
    } catch (err) {
      logger.error({ err: describeFailure(err) }, "could not take the next job; trying again at the next poll");
    } finally {
      claiming = false;
    }
  };
  const timer = setInterval(() => void pump(), options.pollMs ?? 1000);
  timer.unref();
  void pump();

  return {
    kick: () => void pump(),
    async drained() {
      while (claiming || running.size > 0 || (await store.jobs.hasQueued())) {
        await Promise.all(running.values());
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      closed = true;
      clearInterval(timer);
      shutdown.abort();
      await Promise.allSettled(running.values());
    },
  };
}

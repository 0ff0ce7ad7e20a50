import type { Logger } from "pino";
import { describeFailure } from "../errors.js";
import type { GitUrlPolicy } from "../sources/git-url.js";
import { claimNextJob, finishJob, jobToken, requeueInterruptedJobs, type Job } from "../store/jobs.js";
import { gitConnectionToken } from "../store/connections.js";
import { ingestGitRepository } from "./ingest-git.js";
import { ingestWikiSpace } from "./ingest-wiki.js";
import type { OpenVolume } from "./open-volume.js";

export interface JobRunnerOptions {
  volume: OpenVolume;
  logger: Logger;
  /** Jobs run at the same time. @default 2 (the machine has two cores) */
  concurrency?: number;
  /** How often the queue is looked at when nothing kicked it. @default 1000 ms */
  pollMs?: number;
  gitPolicy?: GitUrlPolicy;
}

export interface JobRunner {
  /** Look at the queue now (after a submission), instead of at the next poll. */
  kick(): void;
  /** Resolves when no job runs and none is queued. */
  drained(): Promise<void>;
  close(): Promise<void>;
}

/** Runs queued ingestion and refresh jobs in the background, a bounded number at a time. */
export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { volume, logger } = options;
  const concurrency = options.concurrency ?? 2;
  const running = new Map<number, Promise<void>>();
  let closed = false;
  // Shutdown interrupts running jobs (git is killed); they are re-queued at the next start.
  const shutdown = new AbortController();
  const requeued = requeueInterruptedJobs(volume.db);
  if (requeued) logger.warn({ requeued }, "re-queued jobs interrupted by the last shutdown");

  const run = async (job: Job) => {
    const log = logger.child({ job: job.id, library: job.library_id, kind: job.kind });
    try {
      const payload = job.payload;
      if (payload.source === "wiki") {
        const result = await ingestWikiSpace({ volume, libraryId: job.library_id, ...payload, signal: shutdown.signal });
        finishJob(volume.db, job.id, null);
        log.info(result, "job finished");
        return;
      }
      const token = jobToken(volume.db, volume.key, job.id) ?? (payload.teamId ? gitConnectionToken(volume.db, volume.key, payload.teamId) : undefined);
      const result = await ingestGitRepository({
        volume,
        repositoryUrl: payload.url,
        branch: payload.branch,
        token,
        skipVersionFiltering: payload.skipVersionFiltering,
        generateDocs: payload.generateDocs,
        signal: shutdown.signal,
        ...options.gitPolicy,
      });
      finishJob(volume.db, job.id, null);
      log.info({ snippets: result.snippets, commit: result.commit, unchanged: result.unchanged }, "job finished");
    } catch (err) {
      if (shutdown.signal.aborted) return log.info("job interrupted by shutdown; it runs again at the next start");
      const reason = describeFailure(err);
      finishJob(volume.db, job.id, reason);
      log.warn({ reason }, "job failed");
    }
  };

  const pump = () => {
    while (!closed && running.size < concurrency) {
      const job = claimNextJob(volume.db);
      if (!job) return;
      const promise = run(job).finally(() => {
        running.delete(job.id);
        pump();
      });
      running.set(job.id, promise);
    }
  };
  const timer = setInterval(pump, options.pollMs ?? 1000);
  timer.unref();
  pump();

  return {
    kick: pump,
    async drained() {
      while (running.size > 0 || volume.db.prepare("SELECT 1 FROM jobs WHERE state = 'queued'").get()) {
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

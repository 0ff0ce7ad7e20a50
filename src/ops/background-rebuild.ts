import type { Logger } from "pino";
import { describeFailure } from "../errors.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { rebuildStaleVectors } from "./rebuild-stale-vectors.js";

/** After a failed rebuild (the provider down), the next attempt waits this long. */
const RETRY_MS = 60_000;

/**
 * Rebuild a stale vector index while the server serves (a new embedding provider can take hours over a large
 * volume): search ranks by BM25 alone meanwhile and says so (rankSnippetsWithFallback). A failure is logged and
 * tried again a minute later, until the index is whole or the server stops.
 */
export function rebuildInBackground(volume: OpenVolume, logger: Logger): { close(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  const attempt = () => {
    running = rebuildStaleVectors(volume, logger, stop.signal).catch((err: unknown) => {
      if (stopped) return;
      logger.error({ err: describeFailure(err), retryInSeconds: RETRY_MS / 1000 }, "rebuilding the vector index failed; search ranks by BM25 alone until it succeeds");
      if (!stopped) timer = setTimeout(attempt, RETRY_MS);
    });
  };
  attempt();
  return {
    async close() {
      stopped = true;
      stop.abort();
      clearTimeout(timer);
      await running.catch(() => {});
    },
  };
}

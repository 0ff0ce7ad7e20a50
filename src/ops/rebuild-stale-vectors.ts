import type { Logger } from "pino";
import { rebuildVectors } from "./rebuild-vectors.js";
import type { OpenVolume } from "../volume/open-volume.js";

/**
 * Before serving: refill a vector index left stale by an upgrade or a restore of an older archive, logging
 * progress so that an operator watching a slow start knows why it waits.
 */
export async function rebuildStaleVectors(volume: OpenVolume, logger: Pick<Logger, "info" | "warn">, signal?: AbortSignal): Promise<void> {
  if (!volume.index.stale) return;
  const started = Date.now();
  logger.warn("the vector index is from another embedder or layout (or an unfinished rebuild): rebuilding it from the snippets");
  let lastLog = started;
  const count = await rebuildVectors(
    volume,
    (done, total) => {
      if (Date.now() - lastLog < 5000) return;
      lastLog = Date.now();
      logger.info({ done, total }, "rebuilding the vector index");
    },
    signal,
  );
  logger.info({ snippets: count, seconds: (Date.now() - started) / 1000 }, "vector index rebuilt");
}

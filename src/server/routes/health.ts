import type { FastifyPluginAsync } from "fastify";
import type { OpenVolume } from "../../volume/open-volume.js";
import { LdsError } from "../../errors.js";
import { APP_VERSION } from "../../version.js";

/**
 * GET /api/health: liveness plus what an operator checks first after an upgrade or restore; on PostgreSQL also how
 * far this replica's search files are behind the database (from memory: no query). GET /api/ready: whether a load
 * balancer may send requests here (503 not_ready until a replica's first catch-up ended; 200 once serving otherwise).
 */
export const healthRoutes: FastifyPluginAsync<{ volume: OpenVolume }> = async (app, { volume }) => {
  const startedAt = Date.now();
  app.get("/api/health", async () => {
    const lag = volume.searchLag?.();
    return {
      status: "ok",
      version: APP_VERSION,
      schemaVersion: await volume.store.schemaVersion(),
      uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
      ...(lag ? { search: { lagBatches: lag.batches, lagMs: lag.oldestMs ?? 0, listening: lag.listening, caughtUp: lag.caughtUp } } : {}),
    };
  });
  app.get("/api/ready", async () => {
    const lag = volume.searchLag?.();
    if (lag && !lag.caughtUp) {
      throw new LdsError("not_ready", "This replica's search files are still catching up with the database.", {
        hint: "Wait a moment: the replica answers 200 here once it holds every live snippet batch; /api/health shows its search lag.",
      });
    }
    return { status: "ready" };
  });
};

import type { FastifyPluginAsync } from "fastify";
import type { OpenVolume } from "../../volume/open-volume.js";
import { APP_VERSION } from "../../version.js";

/** GET /api/health: liveness plus what an operator checks first after an upgrade or restore. */
export const healthRoutes: FastifyPluginAsync<{ volume: OpenVolume }> = async (app, { volume }) => {
  const startedAt = Date.now();
  app.get("/api/health", async () => ({
    status: "ok",
    version: APP_VERSION,
    schemaVersion: await volume.store.schemaVersion(),
    uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
  }));
};

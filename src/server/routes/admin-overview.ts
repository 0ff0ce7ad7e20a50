import type { FastifyPluginAsync } from "fastify";
import type { Licence } from "../../licence/licence.js";
import type { BackupRunner } from "../../ops/backup-runner.js";
import { overview } from "../../ops/overview.js";
import { lastRestoreOutcome } from "../../ops/restore-outcome.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { requireAdmin } from "../admin-session.js";
import { worded } from "../hint-words.js";

export interface OverviewRouteOptions {
  volume: OpenVolume;
  runner: BackupRunner;
  licence: () => Licence;
}

/** GET /api/overview and GET /api/restore/outcome: what the dashboard's overview and restore pages read. */
export const overviewRoutes: FastifyPluginAsync<OverviewRouteOptions> = async (app, { volume, runner, licence }) => {
  app.addHook("onRequest", requireAdmin(volume.store));

  app.get("/api/overview", async () => {
    const status = await runner.status();
    const answer = await overview({ store: volume.store, dataDir: volume.paths.root, backupsDir: volume.paths.backups, licence: licence(), backup: status });
    return { ...answer, warnings: answer.warnings.map(worded) };
  });

  // The outcome of the last staged restore, recorded when the server came back (null: none since this volume began).
  app.get("/api/restore/outcome", async () => ({ outcome: await lastRestoreOutcome(volume.store) }));
};

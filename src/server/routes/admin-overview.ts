import type { FastifyPluginAsync } from "fastify";
import type { Licence } from "../../licence/licence.js";
import type { BackupRunner } from "../../ops/backup-runner.js";
import { overview, type NewestArchive } from "../../ops/overview.js";
import { storedDestination } from "../../ops/configured-destination.js";
import { lastRestoreOutcome } from "../../ops/restore-outcome.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { requireAdmin } from "../admin-session.js";
import type { Overview, RestoreOutcomeAnswer } from "../api-types.js";
import { worded } from "../hint-words.js";

export interface OverviewRouteOptions {
  volume: OpenVolume;
  runner: BackupRunner;
  licence: () => Licence;
}

/** GET /api/overview and GET /api/restore/outcome: what the dashboard's overview and restore pages read. */
export const overviewRoutes: FastifyPluginAsync<OverviewRouteOptions> = async (app, { volume, runner, licence }) => {
  app.addHook("onRequest", requireAdmin(volume.store));
  const newestArchive = newestArchiveCache(volume);

  app.get("/api/overview", async (): Promise<Overview> => {
    const status = await runner.status();
    const answer = await overview({ store: volume.store, dataDir: volume.paths.root, backupsDir: volume.paths.backups, licence: licence(), backup: status, newestArchive: await newestArchive() });
    return { ...answer, warnings: answer.warnings.map(worded) };
  });

  // The outcome of the last staged restore, recorded when the server came back (null: none since this volume began).
  app.get("/api/restore/outcome", async (): Promise<RestoreOutcomeAnswer> => ({ outcome: await lastRestoreOutcome(volume.store) }));
};

/** How long the newest archive at the destination is remembered: the overview refreshes every 10 s, S3 lists cost. */
const NEWEST_ARCHIVE_TTL_MS = 60_000;

/**
 * The newest archive at the configured destination, looked up at most once a minute. A destination that cannot be
 * listed counts as having none here: the backup's own status and warnings say why it fails.
 */
function newestArchiveCache(volume: OpenVolume): () => Promise<NewestArchive | null> {
  let cached: { at: number; value: NewestArchive | null } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < NEWEST_ARCHIVE_TTL_MS) return cached.value;
    let value: NewestArchive | null = null;
    try {
      const destination = await storedDestination(volume.store, volume.paths.root);
      for await (const archive of destination.list()) {
        value = { name: archive.name, modifiedAt: archive.modifiedAt, location: archive.location };
        break;
      }
    } catch {
      value = null;
    }
    cached = { at: Date.now(), value };
    return value;
  };
}

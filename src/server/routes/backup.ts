import type { FastifyPluginAsync } from "fastify";
import { loadBackupConfig, saveBackupConfig } from "../../ops/backup-config.js";
import { assertArchiveName } from "../../destinations/destination.js";
import { LdsError } from "../../errors.js";
import type { BackupRunner } from "../../ops/backup-runner.js";
import { storedDestination } from "../../ops/configured-destination.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { requireAdmin } from "../admin-session.js";
import { parseBackupConfig, parseDestinationTest } from "../backup-config-schema.js";
import { driverOfKind } from "../../destinations/registry.js";
import { parseRange } from "../range.js";
import { worded } from "../hint-words.js";
import { backupRuns } from "../../ops/backup-history.js";
import { testDestination } from "../../ops/test-destination.js";
import type { LastResult } from "../../ops/backup-runner.js";
import type { ArchiveListing, BackupConfig, BackupRuns, BackupStarted, BackupStatus, DestinationTest, DrillStarted } from "../api-types.js";

export interface BackupRouteOptions {
  volume: OpenVolume;
  runner: BackupRunner;
}

/** The spec's self-hosted backup endpoints, all behind an admin session (docs/admin-api.md). */
export const backupRoutes: FastifyPluginAsync<BackupRouteOptions> = async (app, { volume, runner }) => {
  const { store } = volume;
  const dataDir = volume.paths.root;
  app.addHook("onRequest", requireAdmin(store));

  app.post<{ Reply: BackupStarted }>("/api/backup", async (_request, reply) => {
    const { startedAt } = await runner.start("api");
    return reply.status(202).send({ started: true, startedAt, statusUrl: "/api/backup/status" });
  });

  // Warnings carry neutral hints: worded here as the configuration's fields.
  app.get("/api/backup/status", async (): Promise<BackupStatus> => {
    const status = await runner.status();
    return { ...status, lastResult: status.lastResult && wordedRun(status.lastResult), warnings: status.warnings.map(worded) };
  });

  // The last 50 runs of the server's backups, newest first (the dashboard's history).
  app.get("/api/backup/runs", async (): Promise<BackupRuns> => ({ runs: (await backupRuns(store)).map(wordedRun) }));

  // Write, read back and delete a probe at the destination as given (saved or not): the dashboard's "Test connection".
  app.post("/api/backup/test-connection", async (request): Promise<DestinationTest> => testDestination(store, dataDir, parseDestinationTest(request.body)));

  // A restore drill of the newest archive now (what drill.schedule "daily" runs); the outcome is in the status.
  // 409 while a backup, another drill or a staged restore is under way (the drill would not run).
  app.post<{ Reply: DrillStarted }>("/api/backup/drill", async (_request, reply) => {
    runner.startDrill();
    return reply.status(202).send({ started: true, statusUrl: "/api/backup/status" });
  });

  app.get("/api/backups", async (): Promise<ArchiveListing> => {
    const destination = await storedDestination(store, dataDir);
    const archives = [];
    for await (const archive of destination.list()) archives.push(archive);
    return { destination: destination.description, archives };
  });

  app.get<{ Params: { name: string } }>("/api/backups/:name/download", async (request, reply) => {
    const { name } = request.params;
    assertArchiveName(name);
    const destination = await storedDestination(store, dataDir);
    if (destination.kind !== "local") {
      throw new LdsError("not_downloadable", `Archives at ${destination.description} are not served by LDS: download ${destination.description}/${name} from the store directly.`, {
        hint: "Use the S3 console or `aws s3 cp`, or restore it with lds-restore s3://…/NAME.",
      });
    }
    const { size } = await destination.stat(name);
    const range = parseRange(request.headers.range, size);
    if (range === "unsatisfiable") {
      return reply
        .status(416)
        .header("Content-Range", `bytes */${size}`)
        .send({ error: "validation_error", message: `The range is outside the archive's ${size} bytes.` });
    }
    reply.header("Accept-Ranges", "bytes").header("Content-Type", "application/x-tar").header("Content-Disposition", `attachment; filename="${name}"`);
    if (range) {
      reply
        .status(206)
        .header("Content-Range", `bytes ${range[0]}-${range[1]}/${size}`)
        .header("Content-Length", range[1] - range[0] + 1);
      return reply.send(await destination.get(name, { range }));
    }
    reply.header("Content-Length", size);
    return reply.send(await destination.get(name));
  });

  app.get("/api/backup/config", async (): Promise<BackupConfig> => loadBackupConfig(store));

  app.put("/api/backup/config", async (request): Promise<BackupConfig> => {
    const update = parseBackupConfig(request.body);
    // Early feedback from the driver (a local path must be a writable directory): a 400 now, not a failed backup at 3 a.m.
    await driverOfKind(update.destination.type).checkConfig?.(update.destination, { dataDir });
    const saved = await saveBackupConfig(store, update);
    await runner.reschedule();
    request.log.info({ destination: saved.destination.type, schedule: saved.schedule.preset }, "backup configuration changed");
    return saved;
  });
};

/** A run's warnings and error hint, worded for HTTP clients. */
function wordedRun(run: LastResult): LastResult {
  return { ...run, warnings: run.warnings?.map(worded), error: run.error && worded(run.error) };
}

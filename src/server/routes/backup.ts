import fs from "node:fs";
import type { FastifyPluginAsync } from "fastify";
import { loadBackupConfig, saveBackupConfig } from "../../config/backup-config.js";
import { dataVolume } from "../../config/data-volume.js";
import { assertArchiveName } from "../../destinations/destination.js";
import { LdsError } from "../../errors.js";
import type { BackupRunner } from "../../ops/backup-runner.js";
import { configuredDestination } from "../../ops/configured-destination.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { requireAdmin } from "../admin-session.js";
import { parseBackupConfig } from "../backup-config-schema.js";
import { checkLocalDirectory } from "../../destinations/local-path.js";
import { parseRange } from "../range.js";

export interface BackupRouteOptions {
  volume: OpenVolume;
  runner: BackupRunner;
}

/** The spec's self-hosted backup endpoints, all behind an admin session (docs/admin-api.md). */
export const backupRoutes: FastifyPluginAsync<BackupRouteOptions> = async (app, { volume, runner }) => {
  const { db, key } = volume;
  const dataDir = volume.volume.root;
  app.addHook("onRequest", requireAdmin(db));

  app.post("/api/backup", async (_request, reply) => {
    const { startedAt } = runner.start("api");
    return reply.status(202).send({ started: true, startedAt, statusUrl: "/api/backup/status" });
  });

  app.get("/api/backup/status", async () => runner.status());

  app.get("/api/backups", async () => {
    const destination = await configuredDestination(loadBackupConfig(db), dataDir, db, key);
    const archives = [];
    for await (const archive of destination.list()) archives.push(archive);
    return { destination: destination.description, archives };
  });

  app.get<{ Params: { name: string } }>("/api/backups/:name/download", async (request, reply) => {
    const { name } = request.params;
    assertArchiveName(name);
    const destination = await configuredDestination(loadBackupConfig(db), dataDir, db, key);
    if (destination.kind !== "local") {
      throw new LdsError("not_downloadable", `Archives at ${destination.description} are not served by LDS: download ${destination.description}/${name} from the store directly.`, {
        hint: "Use the S3 console or `aws s3 cp`, or restore it with lds-restore s3://…/NAME.",
      });
    }
    const { size } = await destination.stat(name);
    const range = parseRange(request.headers.range, size);
    if (range === "unsatisfiable") {
      return reply.status(416).header("Content-Range", `bytes */${size}`).send({ error: "validation_error", message: `The range is outside the archive's ${size} bytes.` });
    }
    reply.header("Accept-Ranges", "bytes").header("Content-Type", "application/x-tar").header("Content-Disposition", `attachment; filename="${name}"`);
    if (range) {
      reply.status(206).header("Content-Range", `bytes ${range[0]}-${range[1]}/${size}`).header("Content-Length", range[1] - range[0] + 1);
      return reply.send(await destination.get(name, { range }));
    }
    reply.header("Content-Length", size);
    return reply.send(await destination.get(name));
  });

  app.get("/api/backup/config", async () => loadBackupConfig(db));

  app.put("/api/backup/config", async (request) => {
    const update = parseBackupConfig(request.body);
    if (update.destination.type === "local" && update.destination.path) await checkWritable(update.destination.path);
    const saved = saveBackupConfig(db, key, update);
    runner.reschedule();
    request.log.info({ destination: saved.destination.type, schedule: saved.schedule.preset }, "backup configuration changed");
    return saved;
  });

  /** Early feedback on a local path: better a 400 now than a failed backup at 3 a.m. */
  async function checkWritable(dir: string): Promise<void> {
    checkLocalDirectory(dir);
    if (dir === dataVolume(dataDir).root) {
      throw new LdsError("validation_error", "destination.path must not be the data directory itself.", { hint: "Use a subdirectory, ideally on another disk." });
    }
    try {
      // On the thread pool: a filesystem call that hangs must not stop the event loop.
      await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
      await fs.promises.access(dir, fs.constants.W_OK);
    } catch (err) {
      throw new LdsError("validation_error", `destination.path ${dir} is not a writable directory (${(err as NodeJS.ErrnoException).code}).`, {
        hint: "Create it and give the LDS user write access, or choose another path.",
      });
    }
  }
};

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FastifyPluginAsync } from "fastify";
import { assertArchiveName } from "../../destinations/destination.js";
import { isLdsError, LdsError } from "../../errors.js";
import { action } from "../../hints.js";
import { storedDestination } from "../../ops/configured-destination.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { stageRestore } from "../../ops/staged-restore.js";
import { verify, type VerifyResult } from "../../ops/verify.js";
import { identitiesIn, NO_KEYS, openArchive, type ArchiveKeys } from "../../archive/age.js";
import { openArchiveFile } from "../../ops/archive-file.js";
import { requireAdmin } from "../admin-session.js";
import type { BackupRunner } from "../../ops/backup-runner.js";
import type { ArchiveCheck, ArchiveUpload, ArchiveValidation, LockedUpload, RestoreLimits, RestoreStaged } from "../api-types.js";

export interface RestoreRouteOptions {
  volume: OpenVolume;
  uploadLimitBytes: number;
  /** Staging holds off backups: the restart that applies the restore would cut one off. */
  runner: Pick<BackupRunner, "holdForRestore">;
  /** Called once the staged restore's answer has been sent: the server restarts to apply it. */
  requestRestart: (reason: string) => void;
}

const UPLOADS = "restore-uploads";

/** Validate an archive and stage it for restore at the next start (docs/admin-api.md#restore). */
export const restoreRoutes: FastifyPluginAsync<RestoreRouteOptions> = async (app, { volume, uploadLimitBytes, runner, requestRestart }) => {
  const { store } = volume;
  const root = volume.paths.root;
  const uploads = path.join(root, UPLOADS);
  app.addHook("onRequest", requireAdmin(store));
  // Records every replica shares (PostgreSQL) take no upload and stage nothing: a restart would apply the archive to
  // this replica's own files, not to the records; their restore runs from the command line while no replica serves
  // (this one included). An engine that cannot restore at all says so.
  const cannotRestore = volume.engine.sharedByReplicas ? servedByReplicas() : volume.engine.notYet("restore", "restores staged from the dashboard");
  const refuseUnlessRestorable = async () => {
    if (cannotRestore) throw cannotRestore;
  };
  // The upload is streamed to disk by the route itself, never buffered in memory.
  app.addContentTypeParser("application/octet-stream", (_request, payload, done) => done(null, payload));

  /** An archive from the configured destination, as a local file (downloaded into the data volume for S3). */
  async function fetchNamed(name: string): Promise<{ file: string; downloaded: boolean }> {
    assertArchiveName(name);
    const destination = await storedDestination(store, root);
    const info = await destination.stat(name);
    if (destination.kind === "local") return { file: info.location, downloaded: false };
    fs.mkdirSync(uploads, { recursive: true, mode: 0o700 });
    const file = path.join(uploads, `download-${randomBytes(6).toString("hex")}-${name}`);
    await pipeline(await destination.get(name), fs.createWriteStream(file, { mode: 0o600 }));
    return { file, downloaded: true };
  }

  async function check(file: string, keys: ArchiveKeys = NO_KEYS): Promise<ArchiveCheck> {
    return summary(await verify(file, { tempDir: root, keys }));
  }

  /**
   * An encrypted archive staged for restore is decrypted now, into the data volume (which holds the same data in
   * clear anyway), so that the restart applies it without the identity: the server never keeps an identity.
   */
  async function decryptForStaging(file: string, keys: ArchiveKeys): Promise<string> {
    fs.mkdirSync(uploads, { recursive: true, mode: 0o700 });
    const plain = path.join(uploads, `decrypted-${randomBytes(6).toString("hex")}.tar`);
    const { stream } = await openArchive(openArchiveFile(file).stream, keys);
    try {
      await pipeline(stream, fs.createWriteStream(plain, { flags: "wx", mode: 0o600 }));
    } catch (err) {
      fs.rmSync(plain, { force: true });
      throw err;
    }
    return plain;
  }

  /** Verify the archive (decrypting it into the volume if it is encrypted) and stage it. */
  async function stageChecked(name: string | undefined, uploadId: string | undefined, keys: ArchiveKeys, requestedBy: string) {
    const source = uploadId ? { file: path.join(uploads, `upload-${uploadId}.tar`), downloaded: true } : await fetchNamed(name!);
    if (!fs.existsSync(source.file)) throw new LdsError("archive_not_found", `No upload ${uploadId} (uploads are kept until staged or the server restarts).`);
    const result = await check(source.file, keys);
    if (!result.restorable) {
      throw new LdsError("archive_too_new", `This archive cannot be restored here: ${result.reason}.`, { hint: "Upgrade LDS first." });
    }
    let staged = source;
    if (result.encryption) {
      staged = { file: await decryptForStaging(source.file, keys), downloaded: true };
      if (source.downloaded) fs.rmSync(source.file, { force: true });
    }
    const { stagedAt } = stageRestore(volume.paths, { file: staged.file, move: staged.downloaded, source: name ?? "upload", requestedBy });
    return { stagedAt, result };
  }

  // What the dashboard tells before an upload, and the word a restore is confirmed with: the volume's folder name.
  app.get("/api/restore/limits", async (): Promise<RestoreLimits> => ({ uploadLimitBytes, volumeName: path.basename(root) }));

  app.post<{ Body: { name: string } & AgeKeysBody }>(
    "/api/restore/validate",
    { schema: { body: { type: "object", additionalProperties: false, required: ["name"], properties: { name: { type: "string", maxLength: 128 }, ...AGE_KEY_FIELDS } } } },
    async (request): Promise<ArchiveValidation> => {
      const { file, downloaded } = await fetchNamed(request.body.name);
      try {
        return { name: request.body.name, ...(await check(file, keysOf(request.body))) };
      } finally {
        if (downloaded) fs.rmSync(file, { force: true });
      }
    },
  );

  app.post<{ Reply: ArchiveUpload }>("/api/restore/upload", { bodyLimit: Number.MAX_SAFE_INTEGER, onRequest: refuseUnlessRestorable }, async (request, reply) => {
    if (!request.headers["content-type"]?.startsWith("application/octet-stream")) {
      throw new LdsError("validation_error", "Upload the archive as the raw body with Content-Type: application/octet-stream.");
    }
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > uploadLimitBytes) throw tooLarge(uploadLimitBytes);
    fs.mkdirSync(uploads, { recursive: true, mode: 0o700 });
    const uploadId = randomBytes(12).toString("hex");
    const file = path.join(uploads, `upload-${uploadId}.tar`);
    let received = 0;
    const limiter = new Transform({
      transform(chunk: Buffer, _enc, callback) {
        received += chunk.length;
        callback(received > uploadLimitBytes ? tooLarge(uploadLimitBytes) : null, chunk);
      },
    });
    try {
      await pipeline(request.body as Readable, limiter, fs.createWriteStream(file, { flags: "wx", mode: 0o600 }));
      // An encrypted upload is kept for staging with its identity; its validation says that it needs one.
      const result = await check(file).catch((err: unknown): LockedUpload => {
        if (isLdsError(err, "archive_locked")) return { encrypted: true, restorable: null, reason: err.message };
        throw err;
      });
      return reply.status(201).send({ uploadId, ...result });
    } catch (err) {
      fs.rmSync(file, { force: true });
      throw err;
    }
  });

  app.post<{ Body: { name?: string; uploadId?: string; confirm: boolean } & AgeKeysBody; Reply: RestoreStaged }>(
    "/api/restore/stage",
    {
      onRequest: refuseUnlessRestorable,
      schema: {
        body: {
          type: "object",
          additionalProperties: false,
          required: ["confirm"],
          properties: { name: { type: "string", maxLength: 128 }, uploadId: { type: "string", pattern: "^[0-9a-f]{24}$" }, confirm: { type: "boolean" }, ...AGE_KEY_FIELDS },
        },
      },
    },
    async (request, reply) => {
      const { name, uploadId, confirm } = request.body;
      if (confirm !== true) throw new LdsError("validation_error", "confirm must be true: staging a restore replaces the data at the next start.");
      if ((name === undefined) === (uploadId === undefined)) throw new LdsError("validation_error", "Give exactly one of name or uploadId.");
      const keys = keysOf(request.body);
      // Before the archive is read, and kept until the restart: a backup running now (this server's, or an
      // `lds backup`) is refused with 409, and none can start while the archive is verified and staged.
      const hold = runner.holdForRestore();
      const { stagedAt, result } = await stageChecked(name, uploadId, keys, request.admin!.username).catch((err: unknown) => {
        hold.release();
        throw err;
      });
      request.log.warn({ source: name ?? "upload", by: request.admin!.username }, "restore staged; restarting to apply it");
      void reply.then(
        () => requestRestart("staged restore"),
        () => requestRestart("staged restore"),
      );
      return reply.status(202).send({ staged: true, restarting: true, stagedAt, ...result });
    },
  );
};

function servedByReplicas(): LdsError {
  return new LdsError(
    "volume_locked",
    "A restore cannot be staged here: this server is one replica of a shared PostgreSQL database, which is restored from the command line while no replica serves (this one included).",
    { hint: `Stop every replica, then restore with ${action("restore.intoDatabase")}.` },
  );
}

/** An age identity or passphrase sent with a validation or staging request: used for it, never stored or logged. */
interface AgeKeysBody {
  identity?: string;
  passphrase?: string;
}

const AGE_KEY_FIELDS = {
  identity: { type: "string", minLength: 1, maxLength: 8192 },
  passphrase: { type: "string", minLength: 1, maxLength: 1024 },
};

function keysOf(body: AgeKeysBody): ArchiveKeys {
  const identities = identitiesIn(body.identity ?? "");
  if (body.identity !== undefined && identities.length === 0) throw new LdsError("validation_error", "identity holds no age identity (a line AGE-SECRET-KEY-1…).");
  return { identities, passphrases: body.passphrase ? [body.passphrase] : [] };
}

function summary(result: VerifyResult): ArchiveCheck {
  const m = result.manifest;
  return {
    encryption: result.encryption,
    createdAt: m.createdAt,
    appVersion: m.appVersion,
    formatVersion: m.formatVersion,
    schemaVersion: m.schemaVersion,
    libraries: m.libraries,
    partial: m.partial,
    size: result.size,
    restorable: result.compatibility.restorable,
    reason: result.compatibility.reason,
    needsMigration: result.compatibility.needsMigration,
  };
}

function tooLarge(limit: number): LdsError {
  return new LdsError("payload_too_large", `The upload is larger than the ${limit}-byte limit.`, {
    hint: "Raise LDS_RESTORE_UPLOAD_MAX_BYTES, or copy the archive to the server and use lds-restore.",
  });
}

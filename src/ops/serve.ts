import pino, { type Logger } from "pino";
import { dataVolume } from "../config/data-volume.js";
import { fromSystemError } from "../errors.js";
import { buildApp } from "../server/app.js";
import { lockVolumeExclusive } from "../volume/volume-locks.js";
import { ensureDirectory, openVolume } from "./open-volume.js";
import { describeRecovery, recoverInterruptedRestore } from "./restore-journal.js";

export interface ServeOptions {
  dataDir: string;
  /** @default "127.0.0.1" */
  host?: string;
  /** @default 3000 */
  port?: number;
  logger?: Logger;
}

export interface RunningServer {
  url: string;
  logger: Logger;
  /** Stop accepting requests, finish those in flight, close the volume and release server.lock. */
  close(): Promise<void>;
}

/** Take the volume, open it and listen. Every step undoes the previous ones when a later one fails. */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const volume = dataVolume(options.dataDir);
  ensureDirectory(volume.root);
  const lock = lockVolumeExclusive(volume, "server");
  let opened: ReturnType<typeof openVolume> | undefined;
  try {
    // An interrupted lds-restore is finished before anything reads the volume.
    for (const line of describeRecovery(recoverInterruptedRestore(volume))) logger.warn(line);
    opened = openVolume(volume.root);
    const app = buildApp({ volume: opened, logger });
    const host = options.host ?? "127.0.0.1";
    const port = options.port ?? 3000;
    try {
      await app.listen({ host, port });
    } catch (err) {
      await app.close();
      throw fromSystemError(err, `${host}:${port}`);
    }
    const address = app.server.address();
    const url = typeof address === "object" && address ? `http://${host}:${address.port}` : `http://${host}:${port}`;
    logger.info({ dataDir: volume.root, url }, "LDS is serving");
    const volumeHandle = opened;
    return {
      url,
      logger,
      async close() {
        await app.close();
        volumeHandle.close();
        lock.release();
        logger.info("LDS stopped");
      },
    };
  } catch (err) {
    opened?.close();
    lock.release();
    throw err;
  }
}

/** JSON logs on stdout; secrets are redacted should a header ever be logged. */
export function createLogger(level = process.env.LDS_LOG_LEVEL ?? "info"): Logger {
  return pino({
    level,
    redact: { paths: ["req.headers.authorization", "req.headers.cookie", "*.gitToken", "*.secretAccessKey"], censor: "[redacted]" },
  });
}

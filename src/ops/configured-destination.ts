import type Database from "better-sqlite3";
import { loadS3Secret, type BackupConfig } from "../config/backup-config.js";
import { dataVolume } from "../config/data-volume.js";
import type { Destination } from "../destinations/destination.js";
import { createLocalDestination } from "../destinations/local.js";

/** The Destination the stored configuration describes; the S3 driver (and the AWS SDK) load only when used. */
export async function configuredDestination(config: BackupConfig, dataDir: string, db: Database.Database, key: Buffer): Promise<Destination> {
  const d = config.destination;
  if (d.type === "local") return createLocalDestination({ dir: d.path ?? dataVolume(dataDir).backups });
  const { createS3Destination } = await import("../destinations/s3.js");
  return createS3Destination({
    bucket: d.bucket,
    region: d.region,
    endpoint: d.endpoint ?? undefined,
    forcePathStyle: d.forcePathStyle,
    prefix: d.prefix,
    accessKeyId: d.accessKeyId ?? undefined,
    secretAccessKey: loadS3Secret(db, key),
  });
}

import { AbortMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { LdsError } from "../errors.js";
import { assertArchiveName, isArchiveName, notFound, probeName, type ArchiveInfo, type Destination } from "./destination.js";
import { resumableStream } from "./resumable-stream.js";
import { uploadInParts } from "./s3-multipart.js";
import { s3Error } from "./s3-errors.js";

export interface S3DestinationOptions {
  bucket: string;
  /** @default "us-east-1" */
  region?: string;
  /** Static credentials; when blank, the SDK's default chain (environment, shared files, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Custom endpoint of an S3-compatible store; blank means AWS. */
  endpoint?: string;
  /** Path-style addressing (most self-hosted stores need it). @default false */
  forcePathStyle?: boolean;
  /** Key prefix inside the bucket ("backups/lds"); archives are stored as <prefix>/<name>. @default "" */
  prefix?: string;
  /**
   * Smallest multipart part. It grows with the archive so that no upload needs more than 9,000 parts (72 GiB at
   * 8 MiB). Memory is (queueSize + 1) parts: a backup peaked at 155-164 MiB with 8 MiB parts, 186 with 16 MiB (192
   * with lib-storage), at the same speed against a local store (docs/benchmarks.md, the AWS CLI's default too).
   * @default 8 MiB
   */
  minPartSize?: number;
  /** Parts uploaded in parallel; memory is about partSize × (queueSize + 1). @default 2 */
  queueSize?: number;
}

const MiB = 1024 * 1024;
/** S3 allows 10,000 parts; keep a margin for an archive that ends up larger than its estimate. */
const MAX_PARTS = 9_000;

/** Archives as objects in a bucket. A put is one multipart upload, completed only when the whole archive is sent. */
export function createS3Destination(options: S3DestinationOptions): Destination {
  const region = options.region || "us-east-1";
  const prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
  const keyOf = (name: string) => (prefix ? `${prefix}/${name}` : name);
  const description = `s3://${options.bucket}${prefix ? `/${prefix}` : ""}`;
  const client = new S3Client({
    region,
    endpoint: options.endpoint || undefined,
    forcePathStyle: options.forcePathStyle ?? false,
    credentials: options.accessKeyId ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey ?? "" } : undefined,
    // Some S3-compatible stores reject the SDK's default CRC32 checksums (DESIGN §6).
    ...(options.endpoint ? { requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" } : {}),
    maxAttempts: 3,
  });
  const fail = (err: unknown, action: string) => s3Error(err, { bucket: options.bucket, region, endpoint: options.endpoint, action });
  const info = (name: string, size: number, modified?: Date): ArchiveInfo => ({
    name,
    size,
    modifiedAt: (modified ?? new Date(0)).toISOString(),
    location: `s3://${options.bucket}/${keyOf(name)}`,
  });

  async function stat(name: string): Promise<ArchiveInfo> {
    assertArchiveName(name);
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: options.bucket, Key: keyOf(name) }));
      return info(name, head.ContentLength ?? 0, head.LastModified);
    } catch (err) {
      throw await explainHeadFailure(name, err);
    }
  }

  /**
   * A HEAD answer has no body, so its 404 may mean a missing key or a missing bucket, and its 403 wrong
   * credentials or a denied key. Ask again with a one-byte GET, whose error body names the cause.
   */
  async function explainHeadFailure(name: string, headError: unknown): Promise<LdsError> {
    const status = (headError as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status !== 404 && status !== 403) return fail(headError, `reading ${name}`);
    try {
      const probe = await client.send(new GetObjectCommand({ Bucket: options.bucket, Key: keyOf(name), Range: "bytes=0-0" }));
      (probe.Body as Readable | undefined)?.destroy();
      return fail(headError, `reading ${name}`);
    } catch (err) {
      const code = (err as { name?: string }).name;
      if (code === "NoSuchKey" || code === "NotFound") return notFound(name, description);
      return fail(err, `reading ${name}`);
    }
  }

  /** Abort multipart uploads left for `key`, retrying for a while: the store may be coming back from an outage. */
  async function abortUploads(key: string, attempts = 6): Promise<void> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        const listing = await client.send(new ListMultipartUploadsCommand({ Bucket: options.bucket, Prefix: key }));
        for (const upload of listing.Uploads ?? []) {
          if (upload.Key !== key) continue;
          await client.send(new AbortMultipartUploadCommand({ Bucket: options.bucket, Key: key, UploadId: upload.UploadId }));
        }
        return;
      } catch {
        await sleep(250 * 2 ** attempt);
      }
    }
  }

  return {
    kind: "s3",
    description,

    async put(name, body, opts = {}) {
      assertArchiveName(name);
      const exists = await stat(name).then(
        () => true,
        (err) => {
          if (err instanceof LdsError && err.code === "archive_not_found") return false;
          throw err;
        },
      );
      if (exists) {
        body.destroy();
        throw new LdsError("destination_error", `An archive named ${name} already exists in ${description}.`, {
          hint: "Another backup wrote that name in the same second; run the backup again.",
        });
      }
      const partSize = Math.max(options.minPartSize ?? 8 * MiB, Math.ceil((opts.size ?? 0) / MAX_PARTS));
      // Aborted while the name was being checked: an "abort" event already fired reaches no listener added now.
      if (opts.signal?.aborted) {
        body.destroy();
        throw Object.assign(new Error("aborted"), { name: "AbortError" });
      }
      try {
        await uploadInParts(body, { client, bucket: options.bucket, key: keyOf(name), partSize, queueSize: options.queueSize ?? 2, signal: opts.signal });
      } catch (err) {
        body.destroy();
        await abortUploads(keyOf(name));
        if (opts.signal?.aborted) throw Object.assign(new Error("aborted"), { name: "AbortError" });
        throw fail(err, `uploading ${name}`);
      }
      return stat(name);
    },

    async get(name, opts = {}) {
      const { size } = await stat(name);
      const [start, end] = opts.range ?? [0, size - 1];
      return resumableStream({
        start,
        end,
        signal: opts.signal,
        open: async (from) => {
          try {
            const object = await client.send(new GetObjectCommand({ Bucket: options.bucket, Key: keyOf(name), Range: `bytes=${from}-${end}` }), { abortSignal: opts.signal });
            return object.Body as Readable;
          } catch (err) {
            throw fail(err, `downloading ${name}`);
          }
        },
      });
    },

    stat,

    async removeIncomplete() {
      const removed: string[] = [];
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      for (;;) {
        let listing;
        try {
          listing = await client.send(new ListMultipartUploadsCommand({ Bucket: options.bucket, Prefix: prefix ? `${prefix}/` : undefined, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
        } catch (err) {
          throw fail(err, "listing incomplete uploads");
        }
        for (const upload of listing.Uploads ?? []) {
          const name = (upload.Key ?? "").slice(prefix ? prefix.length + 1 : 0);
          // Only our archive names directly under the prefix: anything else in the bucket belongs to someone else.
          if (!isArchiveName(name) || upload.Key !== keyOf(name)) continue;
          try {
            await client.send(new AbortMultipartUploadCommand({ Bucket: options.bucket, Key: upload.Key, UploadId: upload.UploadId }));
          } catch (err) {
            throw fail(err, `aborting the incomplete upload of ${name}`);
          }
          removed.push(name);
        }
        if (!listing.IsTruncated) return removed;
        keyMarker = listing.NextKeyMarker;
        uploadIdMarker = listing.NextUploadIdMarker;
      }
    },

    async *list() {
      const found: ArchiveInfo[] = [];
      let token: string | undefined;
      do {
        let page;
        try {
          page = await client.send(new ListObjectsV2Command({ Bucket: options.bucket, Prefix: prefix ? `${prefix}/` : undefined, ContinuationToken: token }));
        } catch (err) {
          throw fail(err, "listing archives");
        }
        for (const object of page.Contents ?? []) {
          const name = (object.Key ?? "").slice(prefix ? prefix.length + 1 : 0);
          if (isArchiveName(name)) found.push(info(name, object.Size ?? 0, object.LastModified));
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      yield* found.sort((a, b) => (a.name < b.name ? 1 : -1));
    },

    async probe() {
      const key = keyOf(probeName());
      const body = randomBytes(64);
      await client.send(new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: body })).catch((err: unknown) => {
        throw fail(err, `writing the probe object ${key}`);
      });
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: options.bucket, Key: key })).catch((err: unknown) => {
          throw fail(err, `reading back the probe object ${key}`);
        });
        const read = Buffer.from(await object.Body!.transformToByteArray());
        if (!read.equals(body)) {
          throw new LdsError("destination_error", `${description} answered other bytes for the probe object ${key} than were written.`, {
            hint: "Check the endpoint: it may be a proxy or cache rather than the store itself.",
          });
        }
      } finally {
        await client.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: key })).catch((err: unknown) => {
          throw fail(err, `deleting the probe object ${key}`);
        });
      }
    },

    async remove(name) {
      assertArchiveName(name);
      try {
        await client.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: keyOf(name) }));
      } catch (err) {
        throw fail(err, `deleting ${name}`);
      }
    },
  };
}

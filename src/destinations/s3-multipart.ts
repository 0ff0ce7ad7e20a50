import {
  AbortMultipartUploadCommand,
  ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type UploadPartCommandOutput,
  type S3Client,
} from "@aws-sdk/client-s3";
import type { Readable } from "node:stream";

export interface PartUploadOptions {
  client: S3Client;
  bucket: string;
  key: string;
  partSize: number;
  /** Parts uploading at once. */
  queueSize: number;
  signal?: AbortSignal;
}

/**
 * Upload a stream to S3 in parts, in memory fixed at (queueSize + 1) × partSize: each part is copied into one of
 * that many buffers, allocated once and reused as soon as its request is answered, while the stream waits.
 * lib-storage's Upload (used before 0.7) joins each part from the stream's chunks and keeps the rest as a view on
 * that copy: about 5 × partSize at the peak (85 MiB with 16 MiB parts, measured), freed only when V8 collected it.
 * A stream shorter than one part is one PutObject. On failure the multipart upload is aborted before the error is
 * rethrown, so no part is left billed (the caller also sweeps uploads left by a crash).
 */
export async function uploadInParts(body: Readable, options: PartUploadOptions): Promise<void> {
  const { client, bucket, key, partSize, queueSize, signal } = options;
  const sending = { abortSignal: signal };
  const spare: Buffer[] = [];
  const inFlight = new Set<Promise<void>>();
  const parts: CompletedPart[] = [];
  let uploadId: string | undefined;
  let failure: unknown;

  const nextBuffer = (): Buffer => {
    return spare.pop() ?? Buffer.allocUnsafe(partSize);
  };

  /** Start uploading `length` bytes of `buffer` as part `number`, once fewer than queueSize parts are uploading. */
  const startPart = async (buffer: Buffer, length: number, number: number): Promise<void> => {
    while (inFlight.size >= queueSize) await Promise.race(inFlight);
    if (failure) throw failure;
    uploadId ??= await createUpload(client, bucket, key, signal);
    const part = new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: number, Body: buffer.subarray(0, length), ContentLength: length });
    const tracked: Promise<void> = client
      .send(part, sending)
      .then((answer) => {
        if (!answer.ETag) throw new Error(`part ${number} was answered without an ETag`);
        parts.push({ PartNumber: number, ETag: answer.ETag, ...checksumsOf(answer) });
        spare.push(buffer); // answered: the SDK will not read it again
      })
      .catch((err) => void (failure ??= err))
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  // Stop reading at once when aborted; the requests in flight are cancelled by their abortSignal.
  const onAbort = () => body.destroy(Object.assign(new Error("aborted"), { name: "AbortError" }));
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (signal?.aborted) onAbort();
    let buffer = nextBuffer();
    let filled = 0;
    let number = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      let offset = 0;
      while (offset < chunk.length) {
        const n = chunk.copy(buffer, filled, offset);
        filled += n;
        offset += n;
        if (filled === partSize) {
          await startPart(buffer, filled, ++number);
          buffer = nextBuffer();
          filled = 0;
        }
      }
      if (failure) throw failure;
    }
    if (number === 0) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: buffer.subarray(0, filled), ContentLength: filled }), sending);
      return;
    }
    if (filled > 0) await startPart(buffer, filled, ++number);
    await Promise.all(inFlight);
    if (failure) throw failure;
    parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
    await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }), sending);
  } catch (err) {
    body.destroy();
    await Promise.allSettled(inFlight);
    if (uploadId) await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => {});
    throw err;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** As lib-storage does: when the client adds checksums to requests, the upload declares CRC32 for its parts. */
async function createUpload(client: S3Client, bucket: string, key: string, signal: AbortSignal | undefined): Promise<string> {
  const checksums = await client.config.requestChecksumCalculation();
  const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ...(checksums === "WHEN_SUPPORTED" ? { ChecksumAlgorithm: ChecksumAlgorithm.CRC32 } : {}) }), {
    abortSignal: signal,
  });
  if (!created.UploadId) throw new Error("the multipart upload was created without an UploadId");
  return created.UploadId;
}

/** The checksums S3 answered for a part: CompleteMultipartUpload must repeat them when the upload declared one. */
function checksumsOf(answer: UploadPartCommandOutput): Partial<CompletedPart> {
  const { ChecksumCRC32, ChecksumCRC32C, ChecksumCRC64NVME, ChecksumSHA1, ChecksumSHA256 } = answer;
  const all = { ChecksumCRC32, ChecksumCRC32C, ChecksumCRC64NVME, ChecksumSHA1, ChecksumSHA256 };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
}

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { youngGarbageCollector } from "../util/young-garbage.js";
import { encryptPayload } from "./age-stream.js";
import type { AgeSealing } from "./age-seal.js";
import { archiveStream } from "./write-archive.js";

export interface ArchiveBytesOptions {
  /** The staged snapshot with its manifest (write-archive.ts); each file is removed once the tar has read it. */
  stagingDir: string;
  gzip: boolean;
  /** Encrypt with age: the header made by age.ts, then the payload sealed here. */
  sealing?: AgeSealing;
  /**
   * Keep the garbage small, for a sealed archive streamed on the thread that also holds a multipart upload's part
   * buffers: 256 KiB reads instead of 1 MiB, and a young collection every 1.33 MiB of archive instead of 4 MiB,
   * because each sealed byte leaves three dead ones behind (the tar's chunk, the cipher's output, their join).
   * An encrypted backup to S3 peaked at 139-143 MiB so, against 153-163 (docs/benchmarks.md, 0.7.9); either change
   * alone gained little, as larger chunks in flight survive denser collections and are promoted.
   */
  smallGarbage?: boolean;
}

export interface ArchiveBytes {
  /** The archive exactly as the destination stores it. */
  stream: Readable;
  /** The SHA-256 of those bytes, once the stream has ended. */
  sha256(): string;
  /** Settles once the staged files the tar has read are removed. */
  removed(): Promise<void>;
  /**
   * Whether each chunk of `stream` is a buffer no stage touches again, so that a thread may hand it over instead of
   * copying it: true of the cipher's output (each chunk its own joined buffer), not of the tar's (node-tar reads the
   * length of a file buffer it has emitted to size the next one).
   */
  ownsChunks: boolean;
}

/**
 * The archive's bytes from a staged snapshot: tar, then age's payload cipher if asked (no plaintext copy is ever
 * written), then their SHA-256, in one pipeline that runs on whichever thread calls it (archive-bytes-thread.ts runs
 * it on a thread of its own).
 * Freeing a large, freshly written snapshot file costs about a second per GiB: each one is removed as soon as the
 * tar has read it, on the thread pool, while the next file streams.
 */
export function archiveBytes(options: ArchiveBytesOptions): ArchiveBytes {
  const removals: Array<Promise<void>> = [];
  const smallGarbage = options.smallGarbage === true;
  const tar = archiveStream(options.stagingDir, options.gzip, (rel) => removals.push(fs.promises.rm(path.join(options.stagingDir, rel), { force: true }).catch(() => {})), smallGarbage ? 256 * 1024 : undefined);
  let archive: Readable = tar;
  if (options.sealing) {
    const cipher = encryptPayload(options.sealing.key);
    cipher.push(options.sealing.head);
    tar.on("error", (err) => cipher.destroy(err));
    archive = tar.pipe(cipher);
  }
  const hash = createHash("sha256");
  // Each chunk is a fresh buffer that dies once written (util/young-garbage.ts).
  const collectGarbage = youngGarbageCollector(smallGarbage ? (4 * 1024 * 1024) / 3 : undefined);
  const hashed = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      collectGarbage(chunk.length);
      callback(null, chunk);
    },
  });
  archive.on("error", (err) => hashed.destroy(err));
  archive.pipe(hashed);
  let complete = false;
  hashed.on("finish", () => (complete = true));
  let digest: string | undefined;
  return {
    stream: hashed,
    sha256: () => {
      if (!complete) throw new Error("the archive's SHA-256 is known only once its stream has ended");
      return (digest ??= hash.digest("hex"));
    },
    removed: () => Promise.all(removals).then(() => {}),
    ownsChunks: options.sealing !== undefined,
  };
}

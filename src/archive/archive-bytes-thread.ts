import { Readable } from "node:stream";
import { Worker } from "node:worker_threads";
import { builtModule } from "../util/built-module.js";
import { errorFromThread, type ThreadError } from "../util/worker-answer.js";
import { youngGarbageCollector } from "../util/young-garbage.js";
import type { ArchiveBytes, ArchiveBytesOptions } from "./archive-bytes.js";

const ENTRY = builtModule(import.meta.url, "./archive-bytes-entry.js");
/** Chunks (about 1 MiB each) the thread may send before this side has taken them: memory stays bounded. */
export const CHUNKS_AHEAD = 3;

export type ArchiveThreadMessage = { type: "data"; chunk: Uint8Array } | { type: "end"; sha256: string } | { type: "error"; error: ThreadError };

export interface ArchiveThreadData {
  stagingDir: string;
  gzip: boolean;
  sealing?: { head: Uint8Array; key: Uint8Array };
  lowerPriority: boolean;
}

/**
 * archiveBytes on a thread of its own: the tar, the cipher and the SHA-256 (about 2 s of CPU per GiB encrypted, 0.7
 * s plain) leave this thread, which only hands each chunk to the destination. In the server that thread is the
 * event loop, whose requests waited behind every 1 MiB chunk's hash (docs/benchmarks.md, "API latency"); there the
 * thread also yields the CPU (`lowerPriority`). The thread sends a chunk only while it holds a credit, and each
 * chunk's credit comes back once this side's reader has taken it, so backpressure reaches the tar's reads.
 */
export function archiveBytesInThread(options: ArchiveBytesOptions & { lowerPriority: boolean }): ArchiveBytes {
  const { sealing } = options;
  const data: ArchiveThreadData = {
    stagingDir: options.stagingDir,
    gzip: options.gzip,
    sealing: sealing && { head: new Uint8Array(sealing.head), key: new Uint8Array(sealing.key) },
    lowerPriority: options.lowerPriority,
  };
  // Its heap holds only streams in flight: a small young generation keeps the thread's memory small (-7 MiB).
  const worker = new Worker(ENTRY, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
  // The chunks arrive as transferred buffers, dead here once written (util/young-garbage.ts).
  const collectGarbage = youngGarbageCollector();
  let creditsOwed = 0;
  let digest: string | undefined;
  let finished!: () => void;
  const ended = new Promise<void>((resolve) => (finished = resolve));
  const stream = new Readable({
    read() {
      if (creditsOwed === 0) return;
      worker.postMessage(creditsOwed);
      creditsOwed = 0;
    },
    destroy(err, callback) {
      void worker.terminate();
      finished();
      callback(err);
    },
  });
  worker.on("message", (message: ArchiveThreadMessage) => {
    if (message.type === "error") return stream.destroy(errorFromThread(message.error));
    if (message.type === "end") {
      digest = message.sha256;
      finished();
      stream.push(null);
      return void worker.terminate();
    }
    const chunk = Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength);
    collectGarbage(chunk.length);
    if (stream.push(chunk)) worker.postMessage(1);
    else creditsOwed++;
  });
  worker.on("error", (err) => stream.destroy(err));
  worker.on("exit", (code) => {
    if (digest === undefined && !stream.destroyed) stream.destroy(new Error(`the thread writing the archive exited with code ${code}`));
  });
  return {
    stream,
    ownsChunks: true,
    sha256: () => {
      if (digest === undefined) throw new Error("the archive's SHA-256 is known only once its stream has ended");
      return digest;
    },
    removed: () => ended,
  };
}

import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parentPort, workerData } from "node:worker_threads";
import { errorForThread } from "../util/worker-answer.js";
import { lowerThisThreadsPriority } from "../util/thread-priority.js";
import { archiveBytes } from "./archive-bytes.js";
import { CHUNKS_AHEAD, type ArchiveThreadData, type ArchiveThreadMessage } from "./archive-bytes-thread.js";

// The thread side of archiveBytesInThread: each chunk posted spends a credit; the other side returns credits (a
// number) as its reader takes chunks. "end" carries the SHA-256, once the staged files are removed.
const { stagingDir, gzip, sealing, lowerPriority } = workerData as ArchiveThreadData;
if (lowerPriority) lowerThisThreadsPriority();
const post = (message: ArchiveThreadMessage, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(message, transfer);
let credits = CHUNKS_AHEAD;
let waiting: (() => void) | undefined;
parentPort!.on("message", (returned: number) => {
  credits += returned;
  const resume = waiting;
  waiting = undefined;
  resume?.();
});
const archive = archiveBytes({
  stagingDir,
  gzip,
  sealing: sealing && { head: Buffer.from(sealing.head), key: Buffer.from(sealing.key) },
});
const toParent = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    const own = archive.ownsChunks && chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength;
    // Otherwise a copy of its own to hand over: the chunk may be a view on a buffer a stage still uses.
    const out = own ? new Uint8Array(chunk.buffer as ArrayBuffer) : new Uint8Array(chunk);
    post({ type: "data", chunk: out }, [out.buffer]);
    if (--credits > 0) callback();
    else waiting = () => callback();
  },
  final(callback) {
    void archive.removed().then(() => {
      post({ type: "end", sha256: archive.sha256() });
      callback();
    });
  },
});
pipeline(archive.stream, toParent).catch((err: unknown) => post({ type: "error", error: errorForThread(err) }));

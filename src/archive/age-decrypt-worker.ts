import { Transform } from "node:stream";
import { Worker } from "node:worker_threads";
import { builtModule } from "../util/built-module.js";

const ENTRY = builtModule(import.meta.url, "./age-decrypt-worker-entry.js");
/** Chunks whose plaintext has not come back yet, at most: bounded memory, and both threads busy. */
const AHEAD = 3;

/**
 * The payload's decryption (age-stream.ts) in a worker thread, so that the cipher runs beside the reader's work on
 * this thread (tar parsing, SHA-256, writes) instead of on top of it. Each chunk sent is answered with its
 * plaintext, in order; a chunk is only taken from the writer while fewer than AHEAD answers are outstanding, so
 * backpressure from the reader reaches the file read, and memory stays bounded.
 */
export function decryptPayloadInWorker(key: Buffer): Transform {
  const worker = new Worker(ENTRY, { workerData: { key: new Uint8Array(key) } });
  let outstanding = 0;
  let resume: (() => void) | undefined;
  let flushed: ((err?: Error | null) => void) | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const copy = new Uint8Array(chunk);
      worker.postMessage({ type: "chunk", chunk: copy }, [copy.buffer]);
      outstanding++;
      if (outstanding < AHEAD) callback();
      else resume = () => callback();
    },
    flush(callback) {
      flushed = callback;
      worker.postMessage({ type: "end" });
    },
    destroy(err, callback) {
      void worker.terminate();
      callback(err);
    },
  });
  worker.on("message", (message: { type: "data" | "end"; chunk: Uint8Array } | { type: "error"; message: string }) => {
    if (message.type === "error") {
      void worker.terminate();
      const err = new Error(message.message);
      return flushed ? flushed(err) : stream.destroy(err);
    }
    if (message.chunk.byteLength) stream.push(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
    if (message.type === "end") {
      void worker.terminate();
      return flushed?.();
    }
    outstanding--;
    const next = resume;
    resume = undefined;
    next?.();
  });
  worker.on("error", (err) => stream.destroy(err));
  return stream;
}

import { Worker } from "node:worker_threads";
import type { DataVolume } from "../config/data-volume.js";
import type { NewSnippet } from "../store/records.js";
import type { Store } from "../store/store.js";
import { builtModule } from "../util/built-module.js";
import { errorFromThread, type ThreadError } from "../util/worker-answer.js";
import type { SearchIndex } from "../index/search-index.js";
import { inlineSnippetWriter, type BatchTarget, type SnippetWriter } from "./snippet-writer.js";

const ENTRY = builtModule(import.meta.url, "./snippet-writer-entry.js");

/** What the thread opens: the volume's databases (through its engine), with the key and embedder the server opened them with. */
export interface WriterStart {
  volume: DataVolume;
  key: Uint8Array;
  embedder: { id: string; dimensions: number };
}

type WriterOperation = { op: "append"; target: BatchTarget; rows: NewSnippet[]; vectors: Float32Array[] } | { op: "tidy" } | { op: "purge"; limit: number };
export type WriterRequest = { id: number } & WriterOperation;

type WriterAnswer = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: ThreadError };

export interface SnippetWriterThread extends SnippetWriter {
  /** Waits for the requests under way, then ends the thread. */
  close(): Promise<void>;
}

/**
 * The server's snippet writer: every ingestion and purge write in a thread with connections of its own, so the
 * event loop never waits on the disk for them (snippet-writer.ts says why). Requests are written in the order
 * posted. Should the thread fail, the requests under way reject, `onFailure` is told once, and later writes are
 * made on the event loop again through `fallback`'s connections, as before the thread existed.
 */
export function startSnippetWriterThread(
  volume: DataVolume,
  opened: { store: Store; index: SearchIndex; key: Buffer; embedder: { id: string; dimensions: number } },
  onFailure: (err: Error) => void,
): SnippetWriterThread {
  const start: WriterStart = { volume, key: new Uint8Array(opened.key), embedder: { id: opened.embedder.id, dimensions: opened.embedder.dimensions } };
  const worker = new Worker(ENTRY, { workerData: start });
  const fallback = inlineSnippetWriter(opened.store, opened.index);
  /** Requests posted and not answered yet, with the promise their caller holds (close() waits for them). */
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void; answer: Promise<unknown> }>();
  let nextId = 0;
  let failed: Error | undefined;
  let stopping = false;

  const fail = (err: Error) => {
    if (failed) return;
    failed = err;
    for (const { reject } of pending.values()) reject(new Error(`The snippet writer thread stopped before it answered (${err.message}); the ingestion can be run again.`));
    pending.clear();
    if (!stopping) onFailure(err);
  };
  worker.on("message", (answer: WriterAnswer) => {
    const waiting = pending.get(answer.id);
    pending.delete(answer.id);
    if (answer.ok) waiting?.resolve(answer.result);
    else waiting?.reject(errorFromThread(answer.error));
  });
  worker.on("error", fail);
  const exited = new Promise<void>((resolve) =>
    worker.once("exit", (code) => {
      if (!stopping || code !== 0) fail(new Error(`the snippet writer thread exited with code ${code}`));
      resolve();
    }),
  );
  const ask = <T>(request: WriterOperation, inline: () => Promise<T>): Promise<T> => {
    if (failed || stopping) return inline();
    const id = nextId++;
    let settle!: { resolve: (value: unknown) => void; reject: (err: Error) => void };
    const answer = new Promise<unknown>((resolve, reject) => (settle = { resolve, reject }));
    pending.set(id, { ...settle, answer });
    worker.postMessage({ ...request, id });
    return answer as Promise<T>;
  };

  return {
    append: (target, rows, vectors) => ask({ op: "append", target, rows, vectors }, () => fallback.append(target, rows, vectors)),
    tidy: () => ask({ op: "tidy" }, () => fallback.tidy()),
    purge: (limit) => ask({ op: "purge", limit }, () => fallback.purge(limit)),
    async close() {
      stopping = true;
      await Promise.allSettled([...pending.values()].map((waiting) => waiting.answer));
      worker.postMessage("stop");
      await exited;
    },
  };
}

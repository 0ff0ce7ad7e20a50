import { parentPort, workerData } from "node:worker_threads";
import { chooseEngine } from "../engine/choose-engine.js";
import { fromSystemError, isDiskFull } from "../errors.js";
import { errorForThread } from "../util/worker-answer.js";
import type { Embedder } from "../vectors/embedder.js";
import { inlineSnippetWriter, type SnippetWriter } from "./snippet-writer.js";
import type { WriterRequest, WriterStart } from "./snippet-writer-thread.js";

// The thread side of the snippet writer: connections of its own to the volume's databases, from its engine (already
// migrated by the server that started it, and checkpointed by the server's checkpoint thread), and each request
// written in turn, in the order posted.
const { volume, key, embedder } = workerData as WriterStart;
// The embedder's id and dimensions are what the vector index checks; this thread never embeds. Requests posted
// meanwhile wait in the port until the listener below is attached; a failure to connect ends the thread (the
// server's writes then fall back to its own connections).
const connected = await chooseEngine(volume).connect(volume, Buffer.from(key), embedder as Embedder);
const writer: SnippetWriter = inlineSnippetWriter(connected.store, connected.index);

parentPort!.on("message", async (request: WriterRequest | "stop") => {
  if (request === "stop") {
    connected.close();
    parentPort!.close();
    return;
  }
  try {
    const result = request.op === "append" ? await writer.append(request.target, request.rows, request.vectors) : request.op === "tidy" ? await writer.tidy() : await writer.purge(request.limit);
    parentPort!.postMessage({ id: request.id, ok: true, result });
  } catch (err) {
    // A full disk keeps its meaning (disk_full) across the thread: SQLite's error would arrive as plain text.
    parentPort!.postMessage({ id: request.id, ok: false, error: errorForThread(isDiskFull(err) ? fromSystemError(err, "the data volume") : err) });
  }
});

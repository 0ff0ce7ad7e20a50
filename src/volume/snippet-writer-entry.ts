import { parentPort, workerData } from "node:worker_threads";
import { fromSystemError, isDiskFull } from "../errors.js";
import { openStore } from "../store/open-store.js";
import { createSqliteStore } from "../store/sqlite-store.js";
import { errorForThread } from "../util/worker-answer.js";
import { createSqliteSearchIndex } from "../index/sqlite/sqlite-search-index.js";
import { openVectorIndex } from "../index/sqlite/vector-index.js";
import { inlineSnippetWriter, type SnippetWriter } from "./snippet-writer.js";
import type { WriterRequest, WriterStart } from "./snippet-writer-thread.js";

// The thread side of the snippet writer: connections of its own to both databases (lds.db already migrated by the
// server that started it), and each request written in turn, in the order posted.
const { dbFile, vectorsFile, key, embedder } = workerData as WriterStart;
// Mapped like the server's own connections: the full-text index's upkeep reads many pages (without: each ingestion
// chunk took several milliseconds longer here).
const db = openStore(dbFile, { migrate: false, mappedReads: true });
const vectors = openVectorIndex(vectorsFile, embedder, { mappedReads: true });
// The server's checkpoint thread checkpoints both files (store/checkpointer.ts): a checkpoint inside these commits
// would add its fsync to every chunk's write.
for (const connection of [db, vectors.db]) connection.pragma("wal_autocheckpoint = 0");
const index = createSqliteSearchIndex(db, vectors, { store: dbFile, vectors: vectorsFile });
const writer: SnippetWriter = inlineSnippetWriter(createSqliteStore(db, Buffer.from(key)), index);

parentPort!.on("message", async (request: WriterRequest | "stop") => {
  if (request === "stop") {
    vectors.close();
    db.close();
    parentPort!.close();
    return;
  }
  try {
    const result =
      request.op === "append" ? await writer.append(request.target, request.rows, request.vectors) : request.op === "tidy" ? await writer.tidy() : await writer.purge(request.limit);
    parentPort!.postMessage({ id: request.id, ok: true, result });
  } catch (err) {
    // A full disk keeps its meaning (disk_full) across the thread: SQLite's error would arrive as plain text.
    parentPort!.postMessage({ id: request.id, ok: false, error: errorForThread(isDiskFull(err) ? fromSystemError(err, "the data volume") : err) });
  }
});

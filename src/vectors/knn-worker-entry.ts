import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { MMAP_BYTES } from "../store/open-store.js";
import { stallpoint } from "../util/failpoint.js";
import { loadVectorExtension } from "./vector-index.js";

// The thread side of the vector search worker: its own read-only connection to vectors.db, one query at a time.
const db = new Database((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
loadVectorExtension(db);
db.pragma("busy_timeout = 5000");
db.pragma(`mmap_size = ${MMAP_BYTES}`);
const knn = db.prepare("SELECT snippet_id, distance FROM vec_snippets WHERE embedding MATCH ? AND k = ? AND partition = ?");

parentPort!.on("message", ({ id, vector, k, partition }: { id: number; vector: Float32Array; k: number; partition: string }) => {
  // Test hooks: a thread that hangs, or one that dies, must cost one request an error, never the server.
  stallpoint("vector-search-stall");
  if (process.env.LDS_FAILPOINT === "vector-search-crash") process.exit(70);
  try {
    const rows = knn.all(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), k, partition) as Array<{ snippet_id: number; distance: number }>;
    parentPort!.postMessage({ id, matches: rows.map((r) => ({ snippetId: Number(r.snippet_id), distance: r.distance })) });
  } catch (err) {
    parentPort!.postMessage({ id, error: (err as Error).message });
  }
});

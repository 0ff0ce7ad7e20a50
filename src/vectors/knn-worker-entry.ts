import { parentPort, workerData } from "node:worker_threads";
import { stallpoint } from "../util/failpoint.js";
import type { PartitionCacheOptions } from "./partition-cache.js";
import { createPartitionSearch } from "./partition-search.js";

// The thread side of the vector search worker: its own read-only connection to vectors.db, one query at a time.
const { file, cache } = workerData as { file: string; cache: PartitionCacheOptions };
const search = createPartitionSearch(file, cache, (copied) => parentPort!.postMessage({ copied }));

parentPort!.on("message", ({ id, vector, k, partition, warm }: { id: number; vector: Float32Array; k: number; partition: string; warm?: boolean }) => {
  if (warm) return search.warm(partition);
  // Test hooks: a thread that hangs, or one that dies, must cost one request an error, never the server.
  stallpoint("vector-search-stall");
  if (process.env.LDS_FAILPOINT === "vector-search-crash") process.exit(70);
  try {
    parentPort!.postMessage({ id, matches: search.nearest(vector, k, partition) });
  } catch (err) {
    parentPort!.postMessage({ id, error: (err as Error).message });
  }
});

import { setFlagsFromString } from "node:v8";

/**
 * How much V8 lets the heap grow past what its last full collection kept, in percent (V8's own choice is a factor of
 * up to 4 for a heap that collects fast). A server keeps about 35 MiB alive while it ingests, but lets its dead chunks
 * (rows, vectors, queries) pile up to 100-125 MiB between full collections. Measured on 100,020 snippets ingested by
 * `lds serve` (docs/benchmarks.md, issue 34): a PostgreSQL replica's peak RSS 225-265 → 162 MiB, a SQLite server's
 * 596 → 512 MiB, at the same ingestion speed. `--optimize-for-size` reached 133 MiB but ingested 30-40% slower.
 */
const HEAP_GROWING_PERCENT = 50;

/**
 * Keep a long-running server's heap near what it uses. Called once as the server starts (server/start.ts), before the volume opens:
 * the flag is read at every full collection, by the main thread and by worker threads started later.
 */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

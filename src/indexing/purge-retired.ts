import { snippetWriterOf, type OpenVolume } from "../volume/open-volume.js";

/** Rows deleted per transaction: small enough that a server answers between them. */
const PURGE_CHUNK = 250;

/** Give the event loop a turn (requests waiting are answered) before the next chunk of work. */
export const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Delete the rows of retired snippet batches (replaced by a newer one, or left unfinished by a failed or crashed
 * ingestion), a chunk at a time: each chunk's vectors first, then its rows, so that a crash between the two
 * leaves vectors without rows, which readers never see, and the next purge finishes the job. Answers how many
 * rows went. Safe to run from two processes at once: each delete is idempotent.
 */
export async function purgeRetiredBatches(volume: OpenVolume, signal?: AbortSignal): Promise<number> {
  const writer = snippetWriterOf(volume);
  let removed = 0;
  for (;;) {
    if (signal?.aborted) return removed;
    // A chunk's vectors, then its rows, then a step of the index's upkeep (snippet-writer.ts): in the server on the
    // writer thread, and a turn of the event loop between chunks either way.
    const chunk = await writer.purge(PURGE_CHUNK);
    if (chunk === 0) return removed;
    removed += chunk;
    await yieldTurn();
  }
}

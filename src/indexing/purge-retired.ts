import type { OpenVolume } from "../volume/open-volume.js";

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
  let removed = 0;
  for (;;) {
    if (signal?.aborted) return removed;
    const chunk = await volume.store.snippets.retiredChunk(PURGE_CHUNK);
    if (!chunk) return removed;
    // Each step in a turn of its own (~10-20 ms each), so that a server answers between them.
    volume.vectors.remove(chunk.ids);
    await yieldTurn();
    await volume.store.snippets.deleteRetiredRows(chunk);
    removed += chunk.ids.length;
    await yieldTurn();
    await volume.store.snippets.tidyIndex();
    await yieldTurn();
  }
}

import type { Sql } from "./sql.js";

/**
 * Notices of the live batches' changes, for the replicas that follow them into their search files
 * (engine/postgres/search-follower.ts). Sent inside the transaction that makes the change, so that PostgreSQL
 * delivers them at its commit (never for a change rolled back) and a listener that reads the live batches on
 * receiving one sees the change. Small on purpose (NOTIFY's payload is capped at 8000 bytes): which library version
 * and batch, and what happened; a follower reads the rest from the tables. A notice can be missed (a listener's
 * connection dropped): followers also poll.
 */
export const BATCH_CHANNEL = "lds_batches";

export type BatchEvent = "published" | "removed";

export interface BatchNotice {
  library: string;
  /** "" for the library's current content; absent when a whole library went. */
  version?: string;
  batch?: number;
  event: BatchEvent;
}

export async function notifyBatchChange(tx: Sql, notice: BatchNotice): Promise<void> {
  await tx.run("SELECT pg_notify($1, $2)", [BATCH_CHANNEL, JSON.stringify(notice)]);
}

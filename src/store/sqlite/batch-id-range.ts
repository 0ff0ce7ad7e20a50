import type Database from "better-sqlite3";
import { liveBatchRecord } from "./snippet-batches.js";

/**
 * The lowest and highest snippet id of a live batch, remembered per connection. A live batch's rows never change
 * (rows are added only while it is being written, deleted only once it is retired), so its range is read once:
 * a scan of the batch's index entries, a few milliseconds for 100,000 snippets. The batch's start time is part of
 * the key: a batch number can be handed out again once every row of the batch that had it is gone.
 */
export interface IdRange {
  lowest: number;
  highest: number;
}

const MAX_REMEMBERED = 1000;
const remembered = new WeakMap<Database.Database, Map<string, IdRange | null>>();

/**
 * The live batch of a library version (as liveBatch answers it) and its id range; no range when it has no rows.
 * Without a live batch record the rows are batch 0's, from before batches existed: nothing writes to that batch.
 */
export function liveBatchWithRange(db: Database.Database, libraryId: string, version: string): { batch: number; range?: IdRange } {
  const live = liveBatchRecord(db, libraryId, version) ?? { batch: 0, startedAt: "" };
  let ranges = remembered.get(db);
  if (!ranges) remembered.set(db, (ranges = new Map()));
  const key = JSON.stringify([libraryId, version, live.batch, live.startedAt]);
  let range = ranges.get(key);
  if (range === undefined) {
    const row = db.prepare("SELECT min(id) AS lowest, max(id) AS highest FROM snippets INDEXED BY snippets_by_batch WHERE library_id = ? AND version = ? AND batch = ?").get(libraryId, version, live.batch) as {
      lowest: number | null;
      highest: number | null;
    };
    range = row.lowest === null || row.highest === null ? null : { lowest: row.lowest, highest: row.highest };
    if (ranges.size >= MAX_REMEMBERED) ranges.delete(ranges.keys().next().value!);
    ranges.set(key, range);
  }
  return range ? { batch: live.batch, range } : { batch: live.batch };
}

import type Database from "better-sqlite3";
import type { UsageCount } from "../records.js";

/**
 * Distinct names kept per library, day and dimension. Query words and client names come from callers, so without a
 * cap random words would add rows without bound; with it a library holds at most the sum of these rows a day (and
 * days are kept a year), whatever is sent. Past the cap a new name is not stored; names already stored keep counting.
 */
export const DISTINCT_NAMES_PER_DAY: Record<UsageCount["dimension"], number> = { client: 10, topic: 50, mcpClient: 20 };

/**
 * Add a batch of counters in one transaction (the server buffers requests and writes them every few seconds). The
 * cap is checked by the same statement that inserts, under the write lock of an immediate transaction, so servers
 * sharing the database cannot both slip past it.
 */
export function addUsage(db: Database.Database, counts: UsageCount[]): void {
  const add = db.prepare(
    `INSERT INTO library_usage (library_id, day, dimension, name, count)
       SELECT @libraryId, @day, @dimension, @name, @count
       WHERE EXISTS (SELECT 1 FROM library_usage WHERE library_id = @libraryId AND day = @day AND dimension = @dimension AND name = @name)
          OR (SELECT count(*) FROM library_usage WHERE library_id = @libraryId AND day = @day AND dimension = @dimension) < @cap
     ON CONFLICT (library_id, day, dimension, name) DO UPDATE SET count = count + excluded.count`,
  );
  db.transaction(() => {
    for (const c of counts) add.run({ libraryId: c.libraryId, day: c.day, dimension: c.dimension, name: c.name, count: c.count, cap: DISTINCT_NAMES_PER_DAY[c.dimension] ?? 0 });
  }).immediate();
}

/** A library's counters from `fromDay` on. */
export function readUsage(db: Database.Database, libraryId: string, fromDay: string): UsageCount[] {
  return db.prepare("SELECT library_id AS libraryId, day, dimension, name, count FROM library_usage WHERE library_id = ? AND day >= ? ORDER BY day").all(libraryId, fromDay) as UsageCount[];
}

/** Forget counters of days before `beforeDay`; returns how many rows went. */
export function pruneUsage(db: Database.Database, beforeDay: string): number {
  return db.prepare("DELETE FROM library_usage WHERE day < ?").run(beforeDay).changes;
}

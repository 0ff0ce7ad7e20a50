import type { RequestWindow, RequestWindowStore } from "../store.js";
import type { PgContext, Sql } from "./sql.js";

/** How often a replica deletes the windows that have ended (keys seen once: a login name tried, a client address). */
const PRUNE_EVERY_MS = 60_000;

/** The database's clock in milliseconds, for the statements below. */
const NOW_MS = "WITH now AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)";

/**
 * Request windows every replica shares: one upsert-returning statement per charge on an UNLOGGED table (schema
 * 14: not written to the WAL, emptied by a crash, which only forgets counts a rate limit may forget). The row lock
 * the upsert takes serializes charges of one key across replicas; the database's clock times the windows, so that
 * replicas whose clocks differ agree, and says how long a window has left. A refused ceiling changes nothing (the
 * row keeps its count). Windows that ended are deleted by each replica at most once a minute, so the table holds
 * about the keys of the last window, whatever keys clients make up.
 */
export function requestWindowStore({ sql }: PgContext): RequestWindowStore {
  let prunedAt = 0;
  return {
    async charge(key, windowMs, amount, ceiling): Promise<RequestWindow> {
      if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        await pruneEnded(sql);
      }
      const row = await sql.row<RequestWindow>(
        `${NOW_MS}
         INSERT INTO request_windows AS w (key, started_ms, window_ms, count)
           SELECT $1, now.ms, $2, $3 FROM now WHERE $4::integer IS NULL OR $3 <= $4::integer
         ON CONFLICT (key) DO UPDATE SET
           started_ms = CASE WHEN (SELECT ms FROM now) - w.started_ms >= $2 THEN (SELECT ms FROM now) ELSE w.started_ms END,
           window_ms = $2,
           count = CASE WHEN (SELECT ms FROM now) - w.started_ms >= $2 THEN 0 ELSE w.count END + $3
           WHERE $4::integer IS NULL OR CASE WHEN (SELECT ms FROM now) - w.started_ms >= $2 THEN 0 ELSE w.count END + $3 <= $4::integer
         RETURNING started_ms AS start, count, true AS charged, started_ms + $2 - (SELECT ms FROM now) AS "resetsInMs"`,
        [key, windowMs, amount, ceiling ?? null],
      );
      if (row) return row;
      // Refused by the ceiling: the window as it stands (a new one when the last has ended, or none began).
      const current = await sql.row<RequestWindow>(
        `${NOW_MS}
         SELECT coalesce(CASE WHEN now.ms - w.started_ms < $2 THEN w.started_ms END, now.ms) AS start,
                coalesce(CASE WHEN now.ms - w.started_ms < $2 THEN w.count END, 0) AS count,
                false AS charged,
                coalesce(CASE WHEN now.ms - w.started_ms < $2 THEN w.started_ms END, now.ms) + $2 - now.ms AS "resetsInMs"
         FROM now LEFT JOIN request_windows w ON w.key = $1`,
        [key, windowMs],
      );
      return current!;
    },
  };
}

/** Delete the windows that ended: each by its own length. */
async function pruneEnded(sql: Sql): Promise<void> {
  await sql.run(`${NOW_MS} DELETE FROM request_windows USING now WHERE started_ms + window_ms <= now.ms`);
}

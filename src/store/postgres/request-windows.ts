import type { RequestWindow, RequestWindowStore } from "../store.js";
import type { PgContext } from "./sql.js";

/**
 * Request windows every replica shares: one upsert-returning statement per charge on an UNLOGGED table (schema
 * 14: not written to the WAL, emptied by a crash, which only forgets counts a rate limit may forget). The row lock
 * the upsert takes serializes charges of one key across replicas; the database's clock times the windows, so that
 * replicas whose clocks differ agree. A refused ceiling changes nothing (the row keeps its count).
 */
export function requestWindowStore({ sql }: PgContext): RequestWindowStore {
  return {
    async charge(key, windowMs, amount, ceiling): Promise<RequestWindow> {
      const row = await sql.row<{ start: number; count: number; charged: boolean }>(
        `WITH now AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
         INSERT INTO request_windows AS w (key, started_ms, count)
           SELECT $1, now.ms, $3 FROM now WHERE $4::integer IS NULL OR $3 <= $4::integer
         ON CONFLICT (key) DO UPDATE SET
           started_ms = CASE WHEN (SELECT ms FROM now) - w.started_ms >= $2 THEN (SELECT ms FROM now) ELSE w.started_ms END,
           count = CASE WHEN (SELECT ms FROM now) - w.started_ms >= $2 THEN 0 ELSE w.count END + $3
           WHERE $4::integer IS NULL OR CASE WHEN (SELECT ms FROM now) - w.started_ms >= $2 THEN 0 ELSE w.count END + $3 <= $4::integer
         RETURNING started_ms AS start, count, true AS charged`,
        [key, windowMs, amount, ceiling ?? null],
      );
      if (row) return row;
      // Refused by the ceiling: the window as it stands (none yet when the first charge alone passed the ceiling).
      const current = await sql.row<{ start: number; count: number }>(
        `WITH now AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
         SELECT CASE WHEN now.ms - started_ms >= $2 THEN now.ms ELSE started_ms END AS start, CASE WHEN now.ms - started_ms >= $2 THEN 0 ELSE count END AS count
         FROM request_windows, now WHERE key = $1`,
        [key, windowMs],
      );
      return { start: current?.start ?? Date.now(), count: current?.count ?? 0, charged: false };
    },
  };
}

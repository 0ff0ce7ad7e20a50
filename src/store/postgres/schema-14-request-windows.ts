/**
 * Schema 14 on PostgreSQL, also: the rate limits' request windows every replica shares (request-windows.ts).
 * UNLOGGED: counts a crash may forget, so their writes skip the WAL. PostgreSQL only: a SQLite volume has one server,
 * which keeps its windows in memory; a backup leaves this table out.
 */
export const SCHEMA_14_REQUEST_WINDOWS = `
  CREATE UNLOGGED TABLE request_windows (
    key text PRIMARY KEY,
    started_ms bigint NOT NULL,
    window_ms bigint NOT NULL,
    count integer NOT NULL
  );
`;

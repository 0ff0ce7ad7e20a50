import pg from "pg";
import { endpointOf, translateError } from "../../store/postgres/pool.js";
import { sqlOn, type Sql } from "../../store/postgres/sql.js";

/** A connection of its own for a bulk copy, and SQL on it. */
export interface CopyConnection {
  client: pg.Client;
  sql: Sql;
  endpoint: { host: string; port: number };
  /**
   * `work` in one transaction, begun with `begin` (BEGIN plus its modes): committed when it resolves. When it throws,
   * the connection is closed instead of rolled back (the server rolls back a transaction whose connection ends): a
   * COPY cut short can leave the connection in the middle of its protocol, where a ROLLBACK would wait forever.
   */
  transaction<T>(begin: string, work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Host and port of a pool's server, for messages (never its password). */
export function endpointOfPool(pool: pg.Pool): { host: string; port: number } {
  const options = pool.options as pg.PoolConfig;
  if (options.connectionString) return endpointOf(options.connectionString);
  return { host: String(options.host ?? "localhost"), port: Number(options.port ?? 5432) };
}

/** host:port/database of a pool, for reports: never the user or the password. */
export function databaseOfPool(pool: pg.Pool): string {
  const { host, port } = endpointOfPool(pool);
  const url = (pool.options as pg.PoolConfig).connectionString;
  const name = url && URL.canParse(url) ? decodeURIComponent(new URL(url).pathname.slice(1)) : String((pool.options as pg.PoolConfig).database ?? "");
  return `${host}:${port}/${name}`;
}

/**
 * A connection with the pool's settings (server, credentials, parsers) but no time limits: a COPY lasts as long as
 * its table is large, where the pool's statement and read timeouts are meant for a request's queries. (pg's read
 * timeout is not even cleared when a COPY … TO stream ends: it would fail the stream, or the connection's next
 * query, after the fact.) Keep-alive still notices a server that went away.
 */
export async function openCopyConnection(pool: pg.Pool): Promise<CopyConnection> {
  const endpoint = endpointOfPool(pool);
  // Keep-alive probes start after 10 s of silence (the system's default waits two hours): a server that vanished
  // without closing the connection (a partition, a host gone) fails the copy in about a minute, not hours later.
  const client = new pg.Client({ ...(pool.options as pg.ClientConfig), query_timeout: 0, statement_timeout: 0, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
  // A server that goes away emits here; the copy in progress fails with it (database_unreachable).
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw translateError(err, endpoint);
  }
  const sql = sqlOn(client, endpoint);
  try {
    // Whatever the database or role sets by default: a copy is never cut short by a statement timeout.
    await sql.run("SET statement_timeout = 0");
    // Nor ended while the other side works between statements (a managed database's idle-in-transaction limit).
    await sql.run("SET idle_in_transaction_session_timeout = 0");
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= client.end().catch(() => {}));
  return {
    client,
    sql,
    endpoint,
    async transaction(begin, work) {
      await sql.run(begin);
      try {
        const result = await work();
        await sql.run("COMMIT");
        return result;
      } catch (err) {
        await close();
        throw err;
      }
    },
    close,
  };
}

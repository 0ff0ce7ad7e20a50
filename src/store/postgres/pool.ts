import pg from "pg";
import { LdsError } from "../../errors.js";

/** How a PostgreSQL store reaches its database. `url` is postgres://user:password@host:port/database. */
export interface PoolSettings {
  url: string;
  /** Connections held at most (per process). */
  max?: number;
  /** A connection not made within this fails with database_unreachable. */
  connectTimeoutMs?: number;
  /** A statement running longer is cancelled by the server, so that a request never hangs on a lock. */
  statementTimeoutMs?: number;
  /**
   * A CA bundle (PEM) the server's certificate must chain to, its host name checked (LDS_DATABASE_CA_FILE). Without
   * it TLS is what the URL asks for (`sslmode`, `sslrootcert`), which pg reads itself.
   */
  tlsCa?: string;
}

export const DEFAULTS = { max: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 30_000 };

/** int8 (count(*), bigint ids and sums) and numeric (sum of bigint) as numbers: the contract's records hold numbers. */
const NUMERIC_OIDS = new Set([20, 1700]);

/**
 * The parsers of this pool's connections: its own, never pg's global `types`, so that nothing else in the process
 * (another library using pg) sees counts change type.
 */
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    NUMERIC_OIDS.has(oid) && format !== "binary" ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Host and port of a database URL, for messages: never the password. */
export function endpointOf(url: string): { host: string; port: number } {
  try {
    const parsed = new URL(url);
    return { host: decodeURIComponent(parsed.hostname) || "localhost", port: Number(parsed.port || 5432) };
  } catch {
    return { host: "the configured host", port: 5432 };
  }
}

export function openPool(settings: PoolSettings): pg.Pool {
  // Checked here, so that the message is ours: the URL itself (with its password) is never repeated.
  if (!URL.canParse(settings.url) || !/^postgres(ql)?:$/.test(new URL(settings.url).protocol)) {
    throw new LdsError("validation_error", "The PostgreSQL database URL cannot be read.", { hint: "Give it as postgres://user:password@host:port/database (LDS_DATABASE_URL)." });
  }
  const statementTimeout = settings.statementTimeoutMs ?? DEFAULTS.statementTimeoutMs;
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.max ?? DEFAULTS.max,
    connectionTimeoutMillis: settings.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    statement_timeout: statementTimeout,
    // The server cancels a statement past statement_timeout; a server that stopped answering cannot, so the client
    // gives up a little later on its own. Keep-alive notices a connection whose server vanished.
    query_timeout: statementTimeout + 2_000,
    keepAlive: true,
    // Only when given: pg lets the URL's TLS parameters replace this (config/database-settings.ts refuses both).
    ...(settings.tlsCa === undefined ? {} : { ssl: { ca: settings.tlsCa, rejectUnauthorized: true } }),
    types,
  });
  // An idle connection the server drops (a restart) emits here; unhandled it would end the process. The pool has
  // already discarded it: the next query connects again, or fails with database_unreachable.
  pool.on("error", () => {});
  return pool;
}

/** Error codes of a connection that cannot be made or was lost: the database is unreachable, not the query wrong. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
/** SQLSTATEs of a server shutting down or not accepting connections yet (57P0x) and of connection failures (08xxx). */
const UNREACHABLE_STATES = /^(08|57P0[123])/;
const LOST_CONNECTION = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i;

/**
 * A pg error as LDS reports it: an unreachable or lost server is database_unreachable naming host and port (pg's own
 * message may echo connection details, so it is not repeated); a statement past its timeout is `timeout`; anything
 * else passes unchanged.
 */
export function translateError(err: unknown, endpoint: { host: string; port: number }): unknown {
  if (err instanceof LdsError) return err;
  const code = (err as { code?: string } | undefined)?.code ?? "";
  const message = (err as Error | undefined)?.message ?? "";
  if (NETWORK_CODES.has(code) || UNREACHABLE_STATES.test(code) || LOST_CONNECTION.test(message)) {
    return new LdsError("database_unreachable", `The PostgreSQL server at ${endpoint.host}:${endpoint.port} cannot be reached (${code || "no answer"}).`, {
      cause: err,
      hint: "Check that PostgreSQL runs and accepts connections at that address (LDS_DATABASE_URL), then try again.",
    });
  }
  if (code === "57014") {
    return new LdsError("timeout", "A database statement ran past the statement timeout and was cancelled.", {
      cause: err,
      hint: "Try again; if it keeps happening, the database is overloaded or a long lock is held.",
    });
  }
  return err;
}

import fs from "node:fs";
import { LdsError } from "../errors.js";
import { setting } from "../hints.js";
import { wholeFromEnv } from "./env-number.js";

/** SQLite, today's engine of one machine: its files are in the data directory. */
export interface SqliteSettings {
  name: "sqlite";
}

/**
 * PostgreSQL (issue 34): the records in a database several replicas share. `url` holds the password: it is handed to
 * the driver and never put in a message or a log (`endpoint` names the server instead).
 */
export interface PostgresSettings {
  name: "postgres";
  url: string;
  /** Host and port of `url`, for messages. */
  endpoint: { host: string; port: number };
  /** The key every replica shares (32 bytes, mode 0600): never created in this mode. */
  keyFile: string;
  poolMax: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** TLS as the URL asks for it (`sslmode`, `sslrootcert`, read by pg itself), or a CA bundle from LDS_DATABASE_CA_FILE. */
  tls: DatabaseTls;
}

export interface DatabaseTls {
  /** The URL's sslmode; absent: no TLS unless `ca` is given. */
  mode?: (typeof SSL_MODES)[number];
  /** The URL's sslrootcert (pg reads it when it connects). */
  rootCertFile?: string;
  /** LDS_DATABASE_CA_FILE's PEM: the server's certificate and host name are checked against it. */
  ca?: string;
}

export type DatabaseSettings = SqliteSettings | PostgresSettings;

export const SQLITE_DATABASE: SqliteSettings = { name: "sqlite" };

/**
 * The sslmode values LDS accepts, as pg 8 reads them: `require` and `verify-full` both check the server's
 * certificate and name (stricter than libpq's `require`), `no-verify` encrypts without checking, `disable` is plain.
 * pg's `prefer` and `verify-ca` are refused: pg does not do what libpq's names promise (no fallback, no name skip).
 */
export const SSL_MODES = ["disable", "no-verify", "require", "verify-full"] as const;

/** URL parameters about TLS that pg reads; with LDS_DATABASE_CA_FILE they would silently replace it, so they are refused. */
const URL_TLS_PARAMETERS = ["sslmode", "sslrootcert", "sslcert", "sslkey", "ssl"];

const refuse = (message: string, hint: string) => new LdsError("validation_error", message, { hint });

/**
 * The database settings of the CLI and the server, from their environment, parsed once: LDS_DATABASE_URL absent is
 * SQLite in the data directory (unchanged); present, the records are in that PostgreSQL database. A value that is set
 * but not usable is refused naming the variable, never repeating the URL (it holds the password). `urlFrom` names where
 * the URL came from when a command took it from an option instead (lds-restore's --database-url).
 */
export function databaseSettingsFromEnv(env: NodeJS.ProcessEnv, urlFrom = "LDS_DATABASE_URL"): DatabaseSettings {
  const url = env.LDS_DATABASE_URL?.trim();
  if (!url) return SQLITE_DATABASE;
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || !/^postgres(ql)?:$/.test(parsed.protocol)) {
    throw refuse(
      `${urlFrom} is not a PostgreSQL URL (it is not repeated here: it may hold a password).`,
      `Set ${setting("databaseUrl")} to postgres://USER:PASSWORD@HOST:PORT/DATABASE, or unset it to keep the records in SQLite in the data directory.`,
    );
  }
  const keyFile = env.LDS_SECRET_KEY_FILE?.trim();
  if (!keyFile) {
    throw refuse(
      "LDS_SECRET_KEY_FILE is required with LDS_DATABASE_URL: every replica must seal secrets with the same key, so it is never created in this mode.",
      `Create one key (32 random bytes, mode 0600: head -c 32 /dev/urandom > FILE && chmod 600 FILE), give every replica a copy and name it in ${setting("secretKeyFile")}.`,
    );
  }
  const whole = (name: string, fallback: number, min: number, max: number) => wholeFromEnv(env, name, fallback, min, max);
  return {
    name: "postgres",
    url,
    endpoint: { host: decodeURIComponent(parsed.hostname) || "localhost", port: Number(parsed.port || 5432) },
    keyFile,
    poolMax: whole("LDS_DATABASE_POOL_MAX", 10, 1, 1000),
    connectTimeoutMs: whole("LDS_DATABASE_CONNECT_TIMEOUT_MS", 5_000, 100, 600_000),
    statementTimeoutMs: whole("LDS_DATABASE_STATEMENT_TIMEOUT_MS", 30_000, 100, 3_600_000),
    tls: tlsOf(parsed, env.LDS_DATABASE_CA_FILE?.trim() || undefined),
  };
}

function tlsOf(url: URL, caFile: string | undefined): DatabaseTls {
  const mode = url.searchParams.get("sslmode") ?? undefined;
  if (mode !== undefined && !(SSL_MODES as readonly string[]).includes(mode)) {
    throw refuse(`LDS_DATABASE_URL asks for sslmode=${mode.slice(0, 20)}, which LDS does not accept.`, `Use sslmode=${SSL_MODES.join(", sslmode=")} (docs/postgresql.md, "TLS").`);
  }
  const rootCertFile = url.searchParams.get("sslrootcert") ?? undefined;
  if (rootCertFile !== undefined) readable(rootCertFile, "The sslrootcert of LDS_DATABASE_URL");
  if (caFile === undefined) return { mode: mode as DatabaseTls["mode"], rootCertFile };
  const inUrl = URL_TLS_PARAMETERS.filter((name) => url.searchParams.has(name));
  if (inUrl.length) {
    throw refuse(
      `LDS_DATABASE_CA_FILE and the URL's ${inUrl.join(", ")} both set TLS; the URL's would replace the CA file.`,
      `Give TLS in one place: either LDS_DATABASE_CA_FILE (the certificate and host name are checked against it) or sslmode= and sslrootcert= in ${setting("databaseUrl")}.`,
    );
  }
  return { ca: readable(caFile, "LDS_DATABASE_CA_FILE") };
}

function readable(file: string, what: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    throw refuse(`${what} (${file}) cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}).`, "Point it at a readable PEM file of the CA that signed the database server's certificate.");
  }
}

import { takeAdminPassword } from "./admin-password.js";
import { databaseSettingsFromEnv, type DatabaseSettings } from "./database-settings.js";
import { wholeFromEnv } from "./env-number.js";
import { embeddingSettingsFromEnv, type EmbeddingSettings } from "./embedding-settings.js";
import { gitPolicyFromEnv, type GitUrlPolicy } from "./git-settings.js";

/** Everything `lds serve` reads from its environment, parsed once (docs/operations.md lists each variable). */
export interface ServerSettings {
  /** Requests per minute per API key, by plan. */
  planLimits: Record<"free" | "pro" | "enterprise", number>;
  unauthenticatedPerMinute: number;
  /** Search, context and MCP answer public libraries without a key (LDS_PUBLIC_READ), limited per client address. */
  publicRead: boolean;
  anonymousPerMinute: number;
  /** Refreshes per minute: by a library's owner, and by anyone else. */
  refreshLimits: { owner: number; other: number };
  jobConcurrency: number;
  /** How long a claimed job is held without a heartbeat before another runner may take it over (LDS_JOB_LEASE_MS). */
  jobLeaseMs: number;
  searchTimeoutMs: number | undefined;
  /** Memory the vector search worker may give quantized copies of large partitions (LDS_VECTOR_CACHE_MB; 0: none). */
  vectorCacheBytes: number;
  /** Memory the search thread may give word indexes of large libraries, for BM25 (LDS_WORD_INDEX_MB; 0: none). */
  wordIndexBytes: number;
  git: GitUrlPolicy;
  sessionTtlSeconds: number;
  loginAttemptsPerMinute: number;
  uploadLimitBytes: number;
  trustProxy: boolean;
  /** The first admin, created once while there is none. */
  firstAdmin: { username: string; password: string | undefined };
  /** Wait this long for server.lock (a restarting predecessor still closing). */
  restartWaitMs: number;
  /** Under a supervisor (systemd sets INVOCATION_ID; or LDS_SUPERVISED=1): a restart is exit code 75. */
  supervised: boolean;
  /** A licence given inline (LDS_LICENSE: its JSON, or base64 of it); else license.json in the data volume is read. */
  licence: string | undefined;
  /** pino's level for the server's log (LDS_LOG_LEVEL). */
  logLevel: string;
  /** The embedding provider (LDS_EMBEDDINGS_*); null: the offline hashing embedder. */
  embeddings: EmbeddingSettings | null;
  /** Where the records are: SQLite in the data directory, or PostgreSQL (LDS_DATABASE_URL, config/database-settings.ts). */
  database: DatabaseSettings;
}

/** Parse the server's environment: a value that is set but not usable is refused with the variable's name. */
export function serverSettingsFromEnv(env: NodeJS.ProcessEnv): ServerSettings {
  const whole = (name: string, fallback: number, min = 1) => wholeFromEnv(env, name, fallback, min);
  const flag = (name: string) => /^(1|true|yes)$/i.test(env[name]?.trim() ?? "");
  return {
    planLimits: { free: whole("LDS_RATE_LIMIT_FREE", 60), pro: whole("LDS_RATE_LIMIT_PRO", 300), enterprise: whole("LDS_RATE_LIMIT_ENTERPRISE", 1200) },
    unauthenticatedPerMinute: whole("LDS_RATE_LIMIT_UNAUTHENTICATED", 30),
    publicRead: flag("LDS_PUBLIC_READ"),
    anonymousPerMinute: whole("LDS_RATE_LIMIT_ANONYMOUS", 60),
    refreshLimits: { owner: whole("LDS_REFRESH_LIMIT_OWNER", 60), other: whole("LDS_REFRESH_LIMIT", 10) },
    jobConcurrency: whole("LDS_JOB_CONCURRENCY", 2),
    // At least 3 s: heartbeats come every third of it, and a slow database round trip must not cost a job.
    jobLeaseMs: whole("LDS_JOB_LEASE_MS", 30_000, 3_000),
    searchTimeoutMs: env.LDS_SEARCH_TIMEOUT_MS ? whole("LDS_SEARCH_TIMEOUT_MS", 10_000) : undefined,
    // 256 MiB: six libraries of 100,000 snippets of the offline embedder (39 MiB each).
    vectorCacheBytes: whole("LDS_VECTOR_CACHE_MB", 256, 0) * 2 ** 20,
    // 256 MiB: about three libraries of 100,000 snippets of a kilobyte each (store/word-index.ts).
    wordIndexBytes: whole("LDS_WORD_INDEX_MB", 256, 0) * 2 ** 20,
    git: gitPolicyFromEnv(env),
    sessionTtlSeconds: whole("LDS_SESSION_TTL_SECONDS", 12 * 3600),
    loginAttemptsPerMinute: whole("LDS_LOGIN_ATTEMPTS_PER_MINUTE", 10),
    uploadLimitBytes: whole("LDS_RESTORE_UPLOAD_MAX_BYTES", 16 * 1024 ** 3),
    trustProxy: env.LDS_TRUST_PROXY === "true",
    firstAdmin: { username: env.LDS_ADMIN_USERNAME || "admin", password: takeAdminPassword(env) },
    restartWaitMs: whole("LDS_RESTART_WAIT_MS", 0, 0),
    supervised: Boolean(env.INVOCATION_ID) || flag("LDS_SUPERVISED"),
    licence: env.LDS_LICENSE?.trim() || undefined,
    logLevel: env.LDS_LOG_LEVEL?.trim() || "info",
    embeddings: embeddingSettingsFromEnv(env),
    database: databaseSettingsFromEnv(env),
  };
}

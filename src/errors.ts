/**
 * The one error type of LDS and the one table that maps its codes to an HTTP status and a CLI exit code.
 * Nothing below src/cli and src/server reads `status` or `exitCode`: they only throw LdsError with a code.
 */
import { setting } from "./hints.js";

interface CodeInfo {
  /** HTTP status the server answers with. */
  status: number;
  /** Exit code of the CLI. */
  exit: number;
  /** What the code means, printed by `lds --help` and docs/errors.md. */
  summary: string;
}

/** Exit codes, one per kind of outcome, so a cron job or systemd unit can react without parsing text. */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  archiveDamaged: 3,
  notFound: 4,
  busy: 5,
  incompatible: 6,
  cancelled: 7,
  destination: 8,
  secrets: 9,
  forbidden: 10,
  /** An encrypted archive and no identity or passphrase that opens it. */
  locked: 11,
  /** The configured database engine cannot do what the command needs yet (PostgreSQL: issue 34 in progress). */
  unsupported: 12,
  /** `lds serve` asks its supervisor (systemd Restart=on-failure) to start it again: a staged restore is waiting. */
  restart: 75,
  interrupted: 130,
} as const;

const TABLE = {
  // Codes of the public API spec keep the statuses it gives them.
  validation_error: { status: 400, exit: EXIT.usage, summary: "input failed validation" },
  invalid_library_id: { status: 400, exit: EXIT.usage, summary: "library id is not /owner/repo or /<source>/<id>" },
  invalid_api_key: { status: 401, exit: EXIT.forbidden, summary: "API key missing, malformed or unknown" },
  access_denied: { status: 403, exit: EXIT.forbidden, summary: "library not in the caller's allowed libraries" },
  forbidden: { status: 403, exit: EXIT.forbidden, summary: "caller's role or plan does not allow this" },
  library_not_found: { status: 404, exit: EXIT.notFound, summary: "library not found or no access" },
  library_redirected: { status: 301, exit: EXIT.notFound, summary: "the library has a new id: ask for redirectUrl" },
  tag_not_found: { status: 404, exit: EXIT.notFound, summary: "version tag not found for the library" },
  branch_not_found: { status: 404, exit: EXIT.notFound, summary: "branch not added to the library" },
  no_snippets_found: { status: 404, exit: EXIT.notFound, summary: "no documentation snippets could be fetched" },
  library_not_finalized: { status: 202, exit: EXIT.busy, summary: "the library is still being processed: ask again shortly" },
  team_not_found: { status: 404, exit: EXIT.notFound, summary: "team not found or access denied" },
  user_not_found: { status: 404, exit: EXIT.notFound, summary: "user not found" },
  no_libraries_found: { status: 404, exit: EXIT.notFound, summary: "no library matched the search" },
  duplicate_repo: { status: 409, exit: EXIT.usage, summary: "the private repository is already in the team" },
  source_conflict: { status: 409, exit: EXIT.usage, summary: "the library id is taken by another source" },
  rate_limit_exceeded: { status: 429, exit: EXIT.busy, summary: "rate limit exceeded" },
  route_not_found: { status: 404, exit: EXIT.notFound, summary: "no such endpoint" },
  method_not_allowed: { status: 405, exit: EXIT.usage, summary: "the endpoint does not take this method" },
  license_expired: { status: 403, exit: EXIT.forbidden, summary: "the licence has expired; the public API is closed" },
  license_invalid: { status: 403, exit: EXIT.forbidden, summary: "the licence cannot be read" },
  not_authenticated: { status: 401, exit: EXIT.forbidden, summary: "no valid admin session" },
  login_failed: { status: 401, exit: EXIT.forbidden, summary: "wrong username or password" },
  not_downloadable: { status: 409, exit: EXIT.usage, summary: "the archive is not at a local destination" },
  unsupported_media_type: { status: 415, exit: EXIT.usage, summary: "the body's content type is not accepted there" },
  payload_too_large: { status: 413, exit: EXIT.usage, summary: "the upload is larger than the configured limit" },
  repository_url_invalid: { status: 400, exit: EXIT.usage, summary: "the repository URL is not allowed" },
  repository_auth_failed: { status: 403, exit: EXIT.forbidden, summary: "the git host refused the token" },
  repository_not_found: { status: 404, exit: EXIT.notFound, summary: "no such repository or branch" },
  repository_unreachable: { status: 502, exit: EXIT.destination, summary: "the git host cannot be reached" },
  wiki_space_not_found: { status: 404, exit: EXIT.notFound, summary: "no such wiki space or page" },
  repository_too_large: { status: 422, exit: EXIT.usage, summary: "the repository exceeds the size limits" },
  embedding_failed: { status: 502, exit: EXIT.destination, summary: "the embedding provider failed or answered wrongly" },
  internal_error: { status: 500, exit: EXIT.internal, summary: "unexpected internal error" },
  timeout: { status: 504, exit: EXIT.internal, summary: "processing timed out" },

  // The data volume.
  volume_locked: { status: 409, exit: EXIT.busy, summary: "another process holds the data volume" },
  connection_not_found: { status: 404, exit: EXIT.notFound, summary: "no connected account with that id" },
  oauth_state_invalid: { status: 400, exit: EXIT.usage, summary: "an OAuth callback whose state is unknown, used or expired" },
  oauth_failed: { status: 502, exit: EXIT.destination, summary: "the OAuth provider refused or failed the authorization" },
  oauth_not_configured: { status: 409, exit: EXIT.usage, summary: "the OAuth provider has no client id and secret yet" },
  library_busy: { status: 409, exit: EXIT.busy, summary: "a job of the library waits or runs" },
  ingestion_superseded: { status: 409, exit: EXIT.busy, summary: "a newer ingestion of the same library version replaced this one" },
  lease_lost: { status: 409, exit: EXIT.busy, summary: "another runner took over the job (this runner's lease expired)" },
  backup_running: { status: 409, exit: EXIT.busy, summary: "a backup is already running on this data volume" },
  schema_too_new: { status: 500, exit: EXIT.incompatible, summary: "database was written by a newer LDS" },
  // Exit 8 as the other endpoints that cannot be reached (destinations, git hosts): the network or the server is down.
  database_unreachable: { status: 503, exit: EXIT.destination, summary: "the PostgreSQL server cannot be reached" },
  // /api/ready of a replica whose search files have not caught up with the database yet: the balancer waits.
  not_ready: { status: 503, exit: EXIT.busy, summary: "the replica is still catching up with the database" },
  key_missing: { status: 500, exit: EXIT.secrets, summary: "secret.key is missing while sealed secrets exist" },
  key_insecure: { status: 500, exit: EXIT.secrets, summary: "secret.key has unsafe permissions or size" },
  secret_tampered: { status: 500, exit: EXIT.secrets, summary: "a sealed secret failed authentication" },
  address_in_use: { status: 500, exit: EXIT.busy, summary: "the listen address is taken by another process" },
  data_dir_invalid: { status: 500, exit: EXIT.usage, summary: "the data directory cannot be used" },
  engine_unsupported: { status: 501, exit: EXIT.unsupported, summary: "the configured database engine cannot do this yet" },

  // Archives.
  archive_not_found: { status: 404, exit: EXIT.notFound, summary: "no archive with that name or path" },
  path_not_found: { status: 404, exit: EXIT.notFound, summary: "a file or directory does not exist" },
  archive_corrupt: { status: 422, exit: EXIT.archiveDamaged, summary: "archive damaged: truncated, bad checksum" },
  archive_unsafe: { status: 422, exit: EXIT.archiveDamaged, summary: "archive holds entries LDS refuses" },
  archive_too_new: { status: 422, exit: EXIT.incompatible, summary: "archive made by a newer LDS: upgrade first" },
  archive_locked: { status: 422, exit: EXIT.locked, summary: "the archive is encrypted: no identity or passphrase given opens it" },

  // Operator interaction.
  confirmation_required: { status: 400, exit: EXIT.cancelled, summary: "no TTY to confirm on and no --yes" },
  cancelled: { status: 499, exit: EXIT.cancelled, summary: "the operator declined or interrupted" },
  interrupted: { status: 499, exit: EXIT.interrupted, summary: "stopped by a signal (Ctrl-C, SIGTERM)" },

  // Destinations.
  destination_error: { status: 502, exit: EXIT.destination, summary: "the backup destination failed" },
  destination_unreachable: { status: 502, exit: EXIT.destination, summary: "the destination's endpoint cannot be reached" },
  destination_auth_failed: { status: 502, exit: EXIT.destination, summary: "the destination rejected the credentials" },
  destination_access_denied: { status: 502, exit: EXIT.destination, summary: "the credentials may not use that bucket or prefix" },
  bucket_not_found: { status: 502, exit: EXIT.destination, summary: "the S3 bucket does not exist" },
  wrong_region: { status: 502, exit: EXIT.destination, summary: "the S3 bucket is in another region" },
  disk_full: { status: 507, exit: EXIT.destination, summary: "no space left where the archive is written" },
  permission_denied: { status: 500, exit: EXIT.destination, summary: "the OS refused access to a path" },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof TABLE;

export interface LdsErrorOptions {
  cause?: unknown;
  /** One line telling the operator what to do next. */
  hint?: string;
}

export class LdsError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, options: LdsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "LdsError";
    this.code = code;
    this.hint = options.hint;
  }

  get status(): number {
    return TABLE[this.code].status;
  }

  get exitCode(): number {
    return TABLE[this.code].exit;
  }
}

export function isLdsError(value: unknown, code?: ErrorCode): value is LdsError {
  return value instanceof LdsError && (code === undefined || value.code === code);
}

/** Every code with its status, exit code and meaning, for help texts and docs. */
export function errorTable(): Array<{ code: ErrorCode } & CodeInfo> {
  return (Object.keys(TABLE) as ErrorCode[]).map((code) => ({ code, ...TABLE[code] }));
}

/**
 * Translate an OS error into an LdsError an operator can act on. `what` names the path or setting involved.
 * Errors that are already LdsError pass through unchanged.
 */
export function fromSystemError(err: unknown, what: string): LdsError {
  if (err instanceof LdsError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOSPC":
    case "EDQUOT":
    case "SQLITE_FULL":
      return new LdsError("disk_full", `No space left while writing ${what}.`, {
        cause: err,
        hint: "Free space on that filesystem or choose another destination, then run the command again.",
      });
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new LdsError("permission_denied", `Permission denied for ${what}.`, {
        cause: err,
        hint: "Check the owner and mode of that path, or run as the user that owns the data volume.",
      });
    case "EADDRINUSE":
      return new LdsError("address_in_use", `${what} is already in use by another process.`, {
        cause: err,
        hint: `Stop the other process, or choose another address (${setting("listen")}).`,
      });
    case "ENOENT":
      return new LdsError("path_not_found", `${what} does not exist.`, {
        cause: err,
        hint: "Check the path for typos, and that the filesystem it is on is mounted.",
      });
    default:
      return new LdsError("internal_error", `Unexpected error with ${what}: ${(err as Error)?.message ?? err}`, {
        cause: err,
      });
  }
}

/** One line recording why something failed, for a library's state or a job: "code: message" for our errors. */
export function describeFailure(err: unknown): string {
  if (isDiskFull(err)) err = fromSystemError(err, "the data volume");
  if (err instanceof LdsError) return `${err.code}: ${err.message}`;
  return String((err as Error)?.message ?? err);
}

/** ENOSPC, EDQUOT or SQLite's "database or disk is full": the same disk_full everywhere. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: string } | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL";
}

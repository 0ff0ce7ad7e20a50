import type { AccessPolicy, Admin, AuditEntry, ConnectionListing, Job, Library, LibraryOptions, NewSnippet, OAuthGrant, OAuthState, Team, UsageCount, User } from "../../../src/store/records.js";

/**
 * The in-memory engine's records: one Map per kind of record, keyed as the contract looks them up. Every operation
 * runs synchronously from start to end (no await inside), so on Node's one thread each is all or nothing as long
 * as it checks before it changes anything.
 */
export interface MemoryTables {
  /** Seals and unseals secrets (src/secrets/seal.ts, the same sealing as every engine). */
  key: Buffer;
  /** The last id handed out, per kind of record: ids are never reused. */
  lastIds: Map<string, number>;
  /** A clock that only moves forward, for "newest first" without two records at the same instant. */
  ticks: number;

  settings: Map<string, string>;
  /** Secret name → sealed value. */
  secrets: Map<string, string>;

  teams: Map<number, Team & { policy: AccessPolicy | null }>;
  users: Map<number, User & { removed: boolean }>;
  /** `${teamId} ${projectId}` → project name. */
  projects: Map<string, string>;
  /** Key prefix → the key's record: only a digest of its secret. */
  apiKeys: Map<string, { prefix: string; userId: number; digest: Buffer; name: string | null; createdAt: string; revokedAt: string | null }>;

  connections: Map<number, ConnectionRecord>;
  grants: Map<number, GrantRecord>;
  /** SHA-256 of a state → the pending authorization and when it goes stale (ms). */
  oauthStates: Map<string, OAuthState & { expiresAt: number }>;

  admins: Map<number, Admin>;
  /** SHA-256 of a session token → its admin and when it ends (ms). */
  sessions: Map<string, { adminId: number; expiresAt: number }>;

  audit: AuditEntry[];
  /** `${libraryId} ${day} ${dimension} ${name}` → counter. */
  usage: Map<string, UsageCount>;

  libraries: Map<string, Library>;
  options: Map<string, LibraryOptions>;
  redirects: Map<string, string>;
  /** Library id → version name → its record; `tick` orders "newest first". */
  versions: Map<string, Map<string, { name: string; ref: string; commit: string; tick: number }>>;
  /** A job with its state and lease: the runner holding it (running) until `leaseUntil` (ms since the epoch). */
  jobs: Map<number, { job: Job; state: "queued" | "running" | "done" | "failed"; error: string | null; leaseOwner: string | null; leaseUntil: number | null; attempts: number }>;
  /** Batch number (unique over all libraries) → its record. */
  batches: Map<number, { libraryId: string; version: string; batch: number; state: "writing" | "live" | "retired"; snippets: number; tokens: number }>;
  snippets: Map<number, SnippetRecord>;
}

/** A connection as stored: its listing, and where its token is sealed. */
export interface ConnectionRecord extends ConnectionListing {
  /** Where its token is sealed (a pasted token's own secret; an OAuth connection's is its grant's). */
  secretName: string;
}

/** A grant as stored: the listing without where its token may go (kept on its connections). */
export type GrantRecord = Omit<OAuthGrant, "hosts" | "sites">;

export interface SnippetRecord extends NewSnippet {
  id: number;
  libraryId: string;
  version: string;
  batch: number;
}

export function createTables(key: Buffer): MemoryTables {
  return {
    key,
    lastIds: new Map(),
    ticks: 0,
    settings: new Map(),
    secrets: new Map(),
    teams: new Map(),
    users: new Map(),
    projects: new Map(),
    apiKeys: new Map(),
    connections: new Map(),
    grants: new Map(),
    oauthStates: new Map(),
    admins: new Map(),
    sessions: new Map(),
    audit: [],
    usage: new Map(),
    libraries: new Map(),
    options: new Map(),
    redirects: new Map(),
    versions: new Map(),
    jobs: new Map(),
    batches: new Map(),
    snippets: new Map(),
  };
}

/** The next id of a kind of record (1, 2, …), as an autoincrement column hands them out. */
export function nextId(tables: MemoryTables, kind: string): number {
  const id = (tables.lastIds.get(kind) ?? 0) + 1;
  tables.lastIds.set(kind, id);
  return id;
}

export const now = (): string => new Date().toISOString();

/** A copy, so that a caller changing what it was handed cannot change the records. */
export const copy = <T>(value: T): T => structuredClone(value);

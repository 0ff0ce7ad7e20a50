/**
 * The store: every read and write of LDS's records (libraries, snippets, jobs, accounts, settings), as operations
 * named by intent, each group a small interface. Everything above `store/` reaches the records through this
 * contract only, and every operation answers a Promise, so that a second engine (PostgreSQL, for several replicas)
 * can sit behind it. Transactions stay inside an operation: a caller never holds one open across its own awaits.
 * Its record types are in store/records.ts, values computed from them in store/record-values.ts; this file holds
 * interfaces only. The SQLite engine (store/sqlite/sqlite-store.ts) implements it over lds.db, mapping its rows to
 * records; ranking is the search index's (index/search-index.ts), and migrations, snapshots and an archive's checks
 * are engine work (engine/engine.ts). test/store/contract/ fixes what each operation must do, for every engine.
 */
import type {
  AccessPolicy,
  Admin,
  AdminSession,
  ApiKeyListing,
  AuditEntry,
  BranchRecord,
  Caller,
  ConnectionListing,
  EmbeddableSnippet,
  FirstTeam,
  FirstTeamRequest,
  GitConnectionLookup,
  GrantTokens,
  ClaimedJob,
  Job,
  JobKind,
  JobLease,
  JobPayload,
  Library,
  LibraryMove,
  LibraryOptions,
  LibraryState,
  LibraryVersion,
  NewApiKey,
  NewGrant,
  NewLibrary,
  NewSnippet,
  OAuthGrant,
  OAuthState,
  OAuthTokens,
  Plan,
  RetiredChunk,
  Role,
  SessionAdmin,
  SnippetTotals,
  StoredSnippet,
  Team,
  TokenRefresh,
  UsageCount,
  User,
  WikiConnection,
} from "./records.js";

export interface LibraryStore {
  find(id: string): Promise<Library | undefined>;
  /** Every library, by id. */
  list(): Promise<Library[]>;
  /** The libraries indexed from one source (a repository's host and path), whatever their ids. */
  bySource(sourceKey: string): Promise<Library[]>;
  /** The id a library now has that was once `oldId` (private ids moved to /~team-<N>/... in schema 13), if any. */
  redirect(oldId: string): Promise<string | undefined>;
  /** A library without a job (an operator's ingestion runs at once); its source is fixed from now on. */
  create(library: NewLibrary): Promise<void>;
  /** A new library with the options it was submitted with and its first job, all or nothing. */
  createWithJob(library: NewLibrary, options: LibraryOptions | null, payload: JobPayload, token?: string): Promise<void>;
  /** Queue a job for an existing library; `markQueued` shows the library as queued (a refresh of what it serves). */
  queueJob(libraryId: string, job: { kind: JobKind; payload: JobPayload }, token: string | undefined, markQueued: boolean): Promise<void>;
  /** Point a library at a new source with its refresh job and audit record, all or nothing (an operator's move). */
  relocate(move: LibraryMove): Promise<void>;
  /** How a library was submitted, kept so that refreshes index it the same way. */
  options(id: string): Promise<LibraryOptions>;
  /** The branch a library serves, as last fetched: one record (none before its first ingestion). */
  servedBranches(id: string): Promise<BranchRecord[]>;
  recordServedBranch(id: string, record: BranchRecord): Promise<void>;
  /** What the source says the library is (a README's first paragraph, context7.json's description). */
  setDescription(id: string, description: string): Promise<void>;
  /** Move a library to a state of its ingestion; `reason` explains a failure. */
  setState(id: string, state: LibraryState, reason?: string | null): Promise<void>;
  /** Delete a library with its snippets, versions and jobs, all or nothing (library_busy while a job of it waits or runs); answers the removed snippets' ids (their vectors go next). */
  remove(id: string): Promise<number[]>;
}

export interface VersionStore {
  /** A library's pinned versions (tags and added branches), by name. */
  list(libraryId: string): Promise<LibraryVersion[]>;
  /** The names clients can pin, by name or newest first. */
  names(libraryId: string, order?: "name" | "newest"): Promise<string[]>;
  /** The commit a version was last indexed at; undefined before its first indexing. */
  commit(libraryId: string, name: string): Promise<string | undefined>;
  record(libraryId: string, version: LibraryVersion & { commit: string }): Promise<void>;
}

export interface SnippetStore {
  /** How many snippets a library version holds ("" = its current content), of one kind or of both. */
  count(libraryId: string, version?: string, kind?: "code" | "info"): Promise<number>;
  /** Number and tokens of a library's current snippets. */
  totals(libraryId: string): Promise<SnippetTotals>;
  countAll(): Promise<number>;
  /** These snippets of one library version, in the order asked (ids no longer there are left out). */
  load(libraryId: string, version: string, ids: number[]): Promise<StoredSnippet[]>;
  /** Every snippet in pages of `size` by id, for rebuilding the search index without holding them all. */
  pages(size: number): AsyncIterable<EmbeddableSnippet[]>;
  /** The versions ("" = current content) of which a library holds snippets, in any batch. */
  versions(libraryId: string): Promise<string[]>;
  /** The batch readers are served of a library version (0 before its first published batch). */
  liveBatch(libraryId: string, version: string): Promise<number>;
  /**
   * Snippet batches: a library version's new content is written as a batch readers do not see, in as many small
   * writes as it takes, then published at once; the batch it replaces is retired and deleted in chunks afterwards.
   * Opening a batch retires an unfinished one of the same version (the last ingestion started wins).
   */
  openBatch(libraryId: string, version: string): Promise<number>;
  /**
   * Add rows to an open batch, all or nothing; answers their ids, in the order of `rows`, which the writer then gives
   * the search index with their vectors (index/search-index.ts), before the batch is published.
   * `vectors`, one per row in the same order, are kept with the rows in their transaction by an engine whose replicas
   * derive their search files from the records (PostgreSQL); SQLite ignores them (its search index keeps them).
   * ingestion_superseded when it was retired; validation_error when `vectors` are not one per row.
   */
  appendToBatch(libraryId: string, version: string, batch: number, rows: NewSnippet[], vectors?: Float32Array[]): Promise<number[]>;
  /**
   * Serve this batch from now on and retire the one it replaces. ingestion_superseded when it was retired. With a
   * job's `lease`, only while that lease is still the owner's and has not expired, checked in the same transaction
   * (lease_lost otherwise: another runner took the job over); an operator's ingestion (`lds ingest`) passes none.
   */
  publishBatch(libraryId: string, version: string, batch: number, lease?: JobLease): Promise<void>;
  /** Retire an unfinished batch (its ingestion failed). */
  discardBatch(libraryId: string, version: string, batch: number): Promise<void>;
  /**
   * Retire every unfinished batch, answering how many: only when no other process can be writing one (a server's
   * start on a volume it alone has open). A shared database (issue 34) uses leases instead.
   */
  retireUnfinishedAsSoleWriter(): Promise<number>;
  /**
   * Retire the unfinished batches whose library version has no running job with a live lease, answering how many:
   * for a shared database, where other replicas may be writing theirs. A batch an operator's `lds ingest` is writing
   * has no job and is retired too (its publication then answers ingestion_superseded).
   */
  retireAbandonedBatches(): Promise<number>;
  /** Up to `limit` ids of rows of some retired batch; undefined when none is left. */
  retiredChunk(limit: number): Promise<RetiredChunk | undefined>;
  /** Delete these rows of a retired batch (removed from the search index first). */
  deleteRetiredRows(chunk: RetiredChunk): Promise<void>;
}

export interface JobStore {
  /** Queue a job; a git token waits sealed and is removed with the job. */
  enqueue(job: Omit<Job, "id">, token?: string): Promise<number>;
  /**
   * Take the oldest claimable job for `owner`, atomically: a queued one, or a running one whose lease has passed (its
   * runner died: reclaimed). A job whose library version (its id and payload's version, "" when none) already has
   * a running job with a live lease is skipped: one running job per library version. The job becomes running, held
   * by `owner` until now + `leaseMs`, its attempts one more (taken back by `giveBack`). A reclaimed job that had
   * MAX_JOB_ATTEMPTS already is failed instead (ABANDONED_JOB_REASON, its library too when it was not finalized) and
   * the next one is taken.
   */
  claimNext(owner: string, leaseMs: number): Promise<ClaimedJob | undefined>;
  /** Extend the owner's lease to now + `leaseMs`; false when the job is no longer running under this owner's lease. */
  renewLease(jobId: number, owner: string, leaseMs: number): Promise<boolean>;
  /**
   * Give a job back as its holder stops cleanly (a shutdown): it is queued again at once, without a lease, its
   * attempts as before this claim (it did not fail, so it does not count; a lease that passes still does). Fenced
   * like `finish`: false, changing nothing, when another owner holds it or it is no longer running.
   */
  giveBack(jobId: number, owner: string): Promise<boolean>;
  hasQueued(): Promise<boolean>;
  /** Whether a job for this library version waits or runs. */
  hasPending(libraryId: string, version?: string): Promise<boolean>;
  /** Whether any job of the library (any version) waits or runs. */
  hasAnyPending(libraryId: string): Promise<boolean>;
  token(jobId: number): Promise<string | undefined>;
  /**
   * Mark the job done (error null) or failed, fenced by its holder: only while `owner` holds its lease (expired or
   * not, as long as nobody took it over). Answers false, changing nothing, when another owner holds it or it is over.
   */
  finish(jobId: number, owner: string, error: string | null): Promise<boolean>;
  /**
   * At start: jobs that were running when the process died run again at once, without waiting out their leases.
   * Only when no other process can be running one (a sole server on its own lds.db): a shared database relies on
   * the leases instead (claimNext reclaims a dead runner's jobs).
   */
  requeueRunningAsSoleProcess(): Promise<number>;
}

export interface TeamStore {
  create(name: string, plan: Plan): Promise<Team>;
  /** By name, or by numeric id. */
  find(nameOrId: string): Promise<Team | undefined>;
  /** As find, or team_not_found. */
  require(nameOrId: string): Promise<Team>;
  list(): Promise<Team[]>;
  setPlan(team: Team, plan: Plan): Promise<void>;
  /** A team's access policy (search/access-policy.ts); null when it has none. */
  policy(teamId: number): Promise<AccessPolicy | null>;
  setPolicy(teamId: number, policy: AccessPolicy | null): Promise<void>;
  addProject(teamId: number, projectId: string, name: string): Promise<void>;
  hasProject(teamId: number, projectId: string): Promise<boolean>;
  /** On a store without teams only: a team, its owner and an API key, all or nothing; null when teams exist. */
  createFirst(first: FirstTeamRequest): Promise<FirstTeam | null>;
}

export interface UserStore {
  /** A removed user comes back with the team and role given now. */
  add(team: Team, email: string, role: Role): Promise<User>;
  /** As found, or user_not_found. */
  require(email: string): Promise<User>;
  /** Its API keys stop working until it is added again. */
  remove(email: string): Promise<User>;
  /** Every team's current users, with the team's name. */
  list(): Promise<Array<User & { team: string }>>;
}

export interface ApiKeyStore {
  /** A new key: shown once; only its prefix and a digest of its secret are stored. */
  create(userId: number, name: string | null): Promise<NewApiKey>;
  /** The caller a bearer key belongs to (compared in constant time); invalid_api_key otherwise. */
  authenticate(authorization: string | undefined): Promise<Caller>;
  hasActive(): Promise<boolean>;
  revoke(prefix: string): Promise<void>;
  list(): Promise<ApiKeyListing[]>;
}

export interface ConnectionStore {
  /** A team's wiki account; its token sealed. */
  addWiki(connection: Omit<WikiConnection, "id"> & { token: string }): Promise<number>;
  /** A team's git account, valid for repositories on `hosts` only. */
  addGit(teamId: number, token: string, hosts: string[]): Promise<void>;
  /** The team's git token for `host` if its connection is pinned there; else the hosts it is valid for. */
  gitToken(teamId: number, host: string, defaultHost: string): Promise<GitConnectionLookup>;
  findWiki(teamId: number, cloudId: string): Promise<WikiConnection | undefined>;
  wikiToken(connection: WikiConnection): Promise<string>;
  /** Every team's connections, pasted or made by OAuth, without tokens. */
  list(): Promise<ConnectionListing[]>;
  /** Remove a pasted connection and its token; false when there is none with that id (or it belongs to a grant). */
  removePasted(id: number): Promise<boolean>;
}

/** OAuth: authorizations under way, and the grants (tokens) behind connections made in the dashboard. */
export interface OAuthStore {
  /** Remember a pending authorization under its `state` (stored hashed) for `ttlSeconds`. */
  createState(state: string, pending: OAuthState, ttlSeconds: number): Promise<void>;
  /** The pending authorization of `state`, removed (usable once); undefined when unknown or stale. */
  takeState(state: string): Promise<OAuthState | undefined>;
  /** A new grant with its sealed tokens and the connections it makes (replacing the team's previous ones of that kind). */
  saveGrant(grant: NewGrant): Promise<number>;
  tokens(grantId: number): Promise<GrantTokens | undefined>;
  updateTokens(grantId: number, tokens: OAuthTokens): Promise<void>;
  /**
   * A grant's tokens refreshed by one caller at a time, across replicas too (a rotating refresh token is good for
   * one refresh): `refresh` is given the tokens read while the grant is held, other refreshes of the grant wait
   * meanwhile, and what it answers is saved before the grant is let go. It answers "current" when the tokens it is
   * given need nothing (another caller refreshed them while this one waited). The one operation that holds its
   * transaction across a caller's await (the provider's answer, bounded by its request timeout): the alternative, a
   * claim with an expiry, would let a slow provider's refresh run twice. `refresh` must not use the store: it may
   * hold the engine's only free connection. Answers the tokens afterwards; undefined when the grant is gone.
   */
  refreshTokens(grantId: number, refresh: (current: GrantTokens) => Promise<TokenRefresh>): Promise<GrantTokens | undefined>;
  markRevoked(grantId: number, problem: string): Promise<void>;
  /** Delete a grant, its tokens and its connections. */
  remove(grantId: number): Promise<void>;
  list(): Promise<OAuthGrant[]>;
  /** One grant by id (without tokens); undefined when there is none. */
  find(grantId: number): Promise<OAuthGrant | undefined>;
}

export interface AdminStore {
  find(username: string): Promise<Admin | undefined>;
  count(): Promise<number>;
  create(username: string, passwordHash: string): Promise<number>;
  /**
   * The first admin: created only while there is none, in one step, so that of several replicas starting at once
   * with LDS_ADMIN_PASSWORD one creates it and the others find it. Answers its id, or undefined when an admin exists.
   */
  createFirst(username: string, passwordHash: string): Promise<number | undefined>;
  /** A new session; only a digest of its token is stored. */
  createSession(adminId: number, ttlSeconds: number): Promise<AdminSession>;
  /** The admin of a live session, or undefined. */
  sessionAdmin(token: string): Promise<SessionAdmin | undefined>;
  deleteSession(token: string): Promise<void>;
}

export interface SettingStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  /**
   * Set `key` only when it has no value yet, and answer the value it has now: of several processes putting different
   * values at once (replicas recording their key's fingerprint), exactly one wins and all answer the winner's.
   */
  putIfAbsent(key: string, value: string): Promise<string>;
  /**
   * Remove the settings named `prefix` + a suffix that sorts before `before` (by code point): the old rows of a series
   * keyed by time (the claimed slots of scheduled backups, `prefix` + an ISO time). Answers how many were removed.
   */
  pruneBefore(prefix: string, before: string): Promise<number>;
  /** A sealed secret, unsealed. */
  secret(name: string): Promise<string | undefined>;
  hasSecret(name: string): Promise<boolean>;
  /** A setting and its secrets, all or nothing: a secret given is sealed, "" removes it, undefined keeps it. */
  saveWithSecrets(key: string, value: string, secrets: Array<{ name: string; value: string | undefined }>): Promise<void>;
  /** Key rotation: every secret re-sealed with `newKey`, and its fingerprint recorded, all or nothing and durable. */
  resealSecrets(newKey: Buffer, newFingerprint: string): Promise<number>;
}

export interface UsageStore {
  /** Add a batch of request counters, all or nothing. */
  add(counts: UsageCount[]): Promise<void>;
  /** A library's counters from a day (YYYY-MM-DD, UTC) on. */
  read(libraryId: string, fromDay: string): Promise<UsageCount[]>;
  /** Forget the days before this one. */
  prune(beforeDay: string): Promise<number>;
}

export interface AuditStore {
  record(entry: Omit<AuditEntry, "at">): Promise<void>;
  /** Newest first. */
  list(limit?: number): Promise<AuditEntry[]>;
}

/** A key's request window after a charge (RequestWindowStore.charge). */
export interface RequestWindow {
  /** When the window began (ms since the epoch, the clock of whoever keeps the windows); it lasts windowMs. */
  start: number;
  /** Requests counted in it, this charge included when charged. */
  count: number;
  /** False when a charge with a ceiling was refused: nothing was counted. */
  charged: boolean;
  /** What is left of the window, by the same clock as `start` (a replica's own clock may differ from it). */
  resetsInMs: number;
}

/**
 * Fixed windows of requests per key (an API key's prefix, a client address, a login name): what rate limits count,
 * the same for every process that serves these records. A window begins at a key's first request and lasts
 * windowMs; the next request after it begins a new one. Not records: nothing is kept that a restart may not lose.
 */
export interface RequestWindowStore {
  /**
   * Count `amount` requests of `key` in its current window. With a `ceiling`, all or nothing: when the window's count
   * would pass it, nothing is counted (`charged` false). Answers the window after the charge.
   */
  charge(key: string, windowMs: number, amount: number, ceiling?: number): Promise<RequestWindow>;
}

export interface Store {
  readonly libraries: LibraryStore;
  readonly versions: VersionStore;
  readonly snippets: SnippetStore;
  readonly jobs: JobStore;
  readonly teams: TeamStore;
  readonly users: UserStore;
  readonly apiKeys: ApiKeyStore;
  readonly connections: ConnectionStore;
  readonly oauth: OAuthStore;
  readonly admins: AdminStore;
  readonly settings: SettingStore;
  readonly audit: AuditStore;
  readonly usage: UsageStore;
  readonly requestWindows: RequestWindowStore;
  /** The schema version of the records. */
  schemaVersion(): Promise<number>;
}

/**
 * The records the Store contract (store/store.ts) reads and writes, as every engine hands them over: camelCase,
 * typed fields, no JSON text and no row shape of any database. Each engine maps its own rows to these (the SQLite
 * modules in store/sqlite/ do, with a small function per record) so that nothing above `store/` knows a column name.
 */

// ---- Libraries ----

export type LibraryState = "queued" | "fetching" | "parsing" | "embedding" | "finalized" | "failed";

export type LibrarySource = "git" | "wiki";

/** The branch a library serves, as last fetched: one record (none before its first ingestion). */
export interface BranchRecord {
  name: string;
  commit: string;
  fetchedAt: string;
}

export interface Library {
  id: string;
  /** The team that owns a private library; null for a public one. */
  teamId: number | null;
  title: string;
  description: string;
  private: boolean;
  source: LibrarySource;
  sourceUrl: string | null;
  /** The source's host and path, whatever the library's id (libraries.bySource). */
  sourceKey: string | null;
  /** The branch the library serves, as last fetched: at most one record (none before its first ingestion). */
  branches: BranchRecord[];
  ownerUserId: number | null;
  state: LibraryState;
  /** Why the last processing failed, or what it waits for. */
  stateReason: string | null;
  updatedAt: string;
}

export interface NewLibrary {
  id: string;
  teamId: number | null;
  title: string;
  description?: string;
  source: LibrarySource;
  sourceUrl: string;
  sourceKey: string;
  private: boolean;
  ownerUserId: number | null;
}

/** How a library was submitted; kept so that refreshes index it the same way. */
export interface LibraryOptions {
  skipVersionFiltering?: boolean;
  generateDocs?: boolean;
  /** The branch the library serves (its current content); absent: the repository's default branch. */
  branch?: string;
}

/** An operator's move of a library to a new source, with who made it and where the library came from. */
export interface LibraryMove {
  libraryId: string;
  sourceUrl: string;
  sourceKey: string;
  branch?: string;
  teamId: number | null;
  actor: string;
  from: string;
}

/** A library's pinned versions: tags and added branches indexed apart from its current content. */
export interface LibraryVersion {
  name: string;
  /** The tag or branch it was fetched from. */
  ref: string;
}

// ---- Snippets ----

/** What a snippet says: code with its explanation, or a prose section. */
export interface SnippetText {
  kind: "code" | "info";
  title: string;
  description: string;
  language: string | null;
  content: string;
}

/** A snippet to store: its text and where it comes from. */
export interface NewSnippet extends SnippetText {
  /** path#anchor */
  sourcePath: string;
  tokens: number;
  pageTitle: string | null;
}

/** A served snippet as a context answer needs it. */
export interface StoredSnippet extends SnippetText {
  id: number;
  sourcePath: string | null;
  pageTitle: string | null;
}

/** What a snippet's vector is made from, with where the vector belongs. */
export interface EmbeddableSnippet {
  id: number;
  libraryId: string;
  version: string;
  /** Its batch (snippets.openBatch): part of its vector partition. */
  batch: number;
  title: string;
  description: string;
  content: string;
}

/** Number and tokens of a library's current snippets. */
export interface SnippetTotals {
  n: number;
  tokens: number;
}

/** Rows of a retired snippet batch, to be deleted. */
export interface RetiredChunk {
  libraryId: string;
  version: string;
  batch: number;
  ids: number[];
}

// ---- Jobs ----

export type JobPayload = GitJobPayload | WikiJobPayload;

export interface GitJobPayload {
  source?: "git";
  /** Absent in jobs queued by 0.1 (a restored archive): the library's sourceUrl is used. */
  url?: string;
  branch?: string;
  skipVersionFiltering?: boolean;
  generateDocs?: boolean;
  /** Index `branch` as this pinned version (an added branch or tag) instead of the current content. */
  version?: string;
  /** The team whose connected git account is used when the job brings no token. */
  teamId?: number;
}

export interface WikiJobPayload {
  source: "wiki";
  teamId: number;
  cloudId: string;
  spaceKey: string;
  pageIds?: string[];
}

export type JobKind = "ingest" | "refresh";

export interface Job {
  id: number;
  libraryId: string;
  kind: JobKind;
  payload: JobPayload;
}

/** A runner's hold on a running job: fences what it writes (finish, publishing a batch) once another has taken over. */
export interface JobLease {
  jobId: number;
  /** The runner's id (ops/job-runner.ts: host, pid and a random part). */
  owner: string;
}

/** A job as claimed: who holds it, until when (lds.db's timestamp text), and how many times it was claimed so far. */
export interface ClaimedJob extends Job {
  leaseOwner: string;
  leaseUntil: string;
  attempts: number;
}

// ---- Accounts ----

export type Plan = "free" | "pro" | "enterprise";
export type Role = "owner" | "admin" | "member";
export type SourceType = "git" | "wiki";

export interface Team {
  id: number;
  name: string;
  plan: Plan;
}

/** A team's access policy as stored (search/access-policy.ts gives it meaning); null: everything is allowed. */
export interface AccessPolicy {
  sourceTypes: SourceType[];
  libraries: { allow: string[] | null; deny: string[] };
}

export interface User {
  id: number;
  teamId: number;
  email: string;
  role: Role;
}

/** The first team of a new installation, its owner and the owner's first API key (teams.createFirst). */
export interface FirstTeamRequest {
  team: string;
  email: string;
  plan: Plan;
}

export interface FirstTeam extends FirstTeamRequest {
  key: string;
  prefix: string;
}

/** A new API key: the whole key is shown once; only its prefix is kept readable. */
export interface NewApiKey {
  key: string;
  prefix: string;
}

/** Who a bearer key belongs to. */
export interface Caller {
  keyPrefix: string;
  userId: number;
  email: string;
  role: Role;
  teamId: number;
  plan: Plan;
}

export interface ApiKeyListing {
  prefix: string;
  name: string | null;
  email: string;
  createdAt: string;
  revokedAt: string | null;
}

// ---- Operators (the dashboard's admins) and the audit log ----

export interface Admin {
  id: number;
  username: string;
  /** The password's hash as server/passwords.ts made it, never the password. */
  passwordHash: string;
}

/** The admin a live session belongs to. */
export interface SessionAdmin {
  id: number;
  username: string;
}

export interface AdminSession {
  token: string;
  expiresAt: Date;
}

export interface AuditEntry {
  at: string;
  actor: string;
  action: string;
  subject: string;
  details: Record<string, unknown>;
}

// ---- Connections and OAuth ----

export interface WikiConnection {
  id: number;
  teamId: number;
  cloudId: string;
  siteUrl: string;
  apiBase: string;
  /** Made by OAuth: its tokens are the grant's (refreshed by ops/oauth-tokens.ts), not a pasted one. */
  grantId?: number;
}

/** `grantId`: the connection was made by OAuth, and `token` is its access token as stored (it may need a refresh). */
export type GitConnectionLookup = { token?: string; otherHosts: string[] | null; grantId?: number };

/** A connection as an operator lists it: never its token. */
export interface ConnectionListing {
  id: number;
  teamId: number;
  kind: "git" | "wiki";
  /** git: the hosts its token goes to; wiki: the site and the API base. */
  hosts: string[];
  cloudId: string | null;
  siteUrl: string | null;
  apiBase: string | null;
  /** Made by OAuth (its grant), or null for a pasted token. */
  grantId: number | null;
  createdAt: string;
}

/** A pending authorization, as the callback needs it. */
export interface OAuthState {
  provider: string;
  teamId: number;
  verifier: string;
  redirectUri: string;
  startedBy: string;
}

export interface OAuthTokens {
  accessToken: string;
  refreshToken?: string;
  /** When the access token stops working; undefined: it does not expire. */
  expiresAt?: string;
}

/** A grant's tokens with its state and provider (oauth.tokens). */
export interface GrantTokens extends OAuthTokens {
  state: string;
  provider: string;
}

/** What a refresh of a grant's tokens came to (OAuthStore.refreshTokens): new tokens, the provider's refusal, or nothing to do. */
export type TokenRefresh = { tokens: OAuthTokens } | { revoked: string } | "current";

/** An OAuth grant without its tokens: what the dashboard lists. */
export interface OAuthGrant {
  id: number;
  teamId: number;
  provider: string;
  account: string;
  scopes: string;
  expiresAt: string | null;
  state: "active" | "revoked";
  problem: string | null;
  createdAt: string;
  /** Where its token may go: git hosts, or wiki sites with their cloud ids. */
  hosts: string[];
  sites: Array<{ cloudId: string; siteUrl: string }>;
}

/** What a new grant connects: a git account for hosts, or wiki sites (one connection per cloud id). */
export type GrantTarget = { kind: "git"; hosts: string[] } | { kind: "wiki"; sites: Array<{ cloudId: string; siteUrl: string; apiBase: string }> };

/** A new grant as oauth.saveGrant stores it. */
export interface NewGrant {
  teamId: number;
  provider: string;
  account: string;
  scopes: string;
  tokens: OAuthTokens;
  target: GrantTarget;
}

// ---- Usage ----

/** One request counter: requests of a library on a day (UTC, YYYY-MM-DD), by dimension and name. */
export interface UsageCount {
  libraryId: string;
  day: string;
  /** "client" (api, mcp, cli), "topic" (a query word), "mcpClient" (the MCP client's name). */
  dimension: "client" | "topic" | "mcpClient";
  name: string;
  count: number;
}

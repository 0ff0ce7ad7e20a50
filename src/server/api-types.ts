/**
 * The answers of the admin API (docs/admin-api.md), defined once. The route handlers are typed with them, so the
 * compiler checks that the server answers these shapes; the dashboard (src/ui) imports them with `import type`, so
 * it reads what the server sends instead of a copy that drifts (its copy lacked `lastSkipped`, `lastDrill` and
 * `nextDrill`, and took an archive's encryption for a string).
 *
 * Types only: no runtime code, and only `import type`, so that nothing of the server reaches the browser bundle
 * (test/architecture.test.ts keeps ui/ to type-only imports of this file). An answer that a use case produces is
 * its result type, re-exported; an answer that a route builds from records is declared here field by field, so
 * that the API keeps its names when the records change (users' `team_id`).
 */
import type { AgeHeader } from "../archive/age.js";
import type { Compatibility } from "../archive/compatibility.js";
import type { Manifest } from "../archive/manifest.js";
import type { ArchiveInfo } from "../destinations/destination.js";
import type { ProviderConfig } from "../oauth/provider-config.js";
import type { Browsable, ProviderKind } from "../oauth/providers.js";
import type { BackupConfig } from "../ops/backup-config.js";
import type { BackupStatus, LastResult } from "../ops/backup-runner.js";
import type { Overview } from "../ops/overview.js";
import type { RestoreOutcome } from "../ops/restore-outcome.js";
import type { SubmissionAnswer } from "../ops/submit-repository.js";
import type { DestinationTest } from "../ops/test-destination.js";
import type { LibraryState, Plan, Role } from "../store/records.js";

export type { ArchiveInfo, BackupConfig, BackupStatus, Browsable, DestinationTest, Overview, RestoreOutcome, SubmissionAnswer };
export type { DestinationConfig } from "../ops/backup-config.js";
export type { OverviewWarning } from "../ops/overview.js";
export type { DrillRecord } from "../ops/scheduled-drill.js";
/** One backup run, as the status's `lastResult` and each entry of GET /api/backup/runs. */
export type BackupRun = LastResult;

/** Every error: `error` is the stable code, `hint` (when there is one) what to do, worded for HTTP clients. */
export interface ErrorAnswer {
  error: string;
  message: string;
  hint?: string;
}

// Sessions

/** GET /api/auth/session. */
export interface AdminSession {
  username: string;
}

/** POST /api/auth/login (the session itself is the cookie). */
export interface LoginAnswer extends AdminSession {
  expiresAt: string;
}

export interface LogoutAnswer {
  loggedOut: true;
}

// Backups

/** POST /api/backup (202). */
export interface BackupStarted {
  started: true;
  startedAt: string;
  statusUrl: string;
}

/** POST /api/backup/drill (202): the outcome shows in the status's `lastDrill`. */
export interface DrillStarted {
  started: true;
  statusUrl: string;
}

/** GET /api/backup/runs: the last 50, newest first. */
export interface BackupRuns {
  runs: BackupRun[];
}

/** GET /api/backups: the archives at the configured destination, newest first. */
export interface ArchiveListing {
  destination: string;
  archives: ArchiveInfo[];
}

// Restore

/** GET /api/restore/limits. */
export interface RestoreLimits {
  uploadLimitBytes: number;
  /** The data volume's folder name: the word a restore is confirmed with. */
  volumeName: string;
}

/** What a verified archive holds and whether this server can restore it. */
export interface ArchiveCheck extends Pick<Manifest, "createdAt" | "appVersion" | "formatVersion" | "schemaVersion" | "libraries" | "partial">, Compatibility {
  /** The age header's stanza types, or null for an unencrypted archive. */
  encryption: AgeHeader | null;
  size: number;
}

/** POST /api/restore/validate. */
export interface ArchiveValidation extends ArchiveCheck {
  name: string;
}

/** An encrypted upload: checked when it is staged, with the identity or passphrase given then. */
export interface LockedUpload {
  encrypted: true;
  restorable: null;
  reason: string;
}

/** POST /api/restore/upload (201). */
export type ArchiveUpload = { uploadId: string } & (ArchiveCheck | LockedUpload);

/** POST /api/restore/stage (202): the server restarts to apply it. */
export interface RestoreStaged extends ArchiveCheck {
  staged: true;
  restarting: true;
  stagedAt: string;
}

/** GET /api/restore/outcome: null when no restore was staged since this volume began. */
export interface RestoreOutcomeAnswer {
  outcome: RestoreOutcome | null;
}

// Libraries

/** One library of GET /api/libraries, whatever its team. */
export interface AdminLibrary {
  id: string;
  title: string;
  source: "git" | "wiki";
  sourceUrl: string | null;
  private: boolean;
  team: string | null;
  processing: LibraryState;
  reason: string | null;
  totalSnippets: number;
  branch: string;
  versions: string[];
  lastUpdateDate: string;
}

export interface LibraryListing {
  libraries: AdminLibrary[];
}

/** POST /api/libraries/refresh (202). */
export interface RefreshStarted {
  message: string;
}

/** DELETE /api/libraries?id=… */
export interface LibraryRemoved {
  removed: string;
  snippets: number;
}

// Accounts

/** POST /api/teams (201), PATCH /api/teams/:team. */
export interface AccountTeam {
  id: number;
  name: string;
  plan: Plan;
}

/** One team of GET /api/teams, with its number of users. */
export interface TeamSummary extends AccountTeam {
  users: number;
}

export interface TeamListing {
  teams: TeamSummary[];
}

/** One user of GET /api/users, and POST /api/users (201). */
export interface AccountUser {
  id: number;
  team_id: number;
  team: string;
  email: string;
  role: Role;
}

export interface UserListing {
  users: AccountUser[];
}

export interface UserRemoved {
  removed: string;
}

/** One API key of GET /api/keys: never its secret. */
export interface ApiKeySummary {
  prefix: string;
  name: string | null;
  email: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface KeyListing {
  keys: ApiKeySummary[];
}

/** POST /api/keys (201): the only answer that holds the key's secret. */
export interface NewApiKey {
  key: string;
  prefix: string;
  email: string;
}

export interface KeyRevoked {
  revoked: string;
}

// Connections (OAuth)

/** PUT /api/oauth/providers/:kind: one provider's settings; its client secret is write-only (`clientSecretSet`). */
export interface ProviderSettings extends ProviderConfig {
  clientSecretSet: boolean;
}

/** One provider of GET /api/oauth/providers: what it connects, its settings and its defaults. */
export interface ListedProvider extends ProviderSettings {
  kind: ProviderKind;
  name: string;
  connects: "git" | "wiki";
  defaults: ProviderConfig;
}

/** GET /api/oauth/providers. */
export interface ProviderListing {
  redirectUri: string;
  providers: ListedProvider[];
}

/** POST /api/oauth/:kind/start: where the browser goes to authorize. */
export interface AuthorizationStarted {
  authorizeUrl: string;
}

/** GET /api/oauth/connected/:id: the account a Connect just added, as the server recorded it. */
export interface ConnectedAccount {
  provider: string;
  providerName: string;
  account: string;
  team: string | null;
}

/** One connected account of GET /api/connections, without its tokens. */
export interface Connection {
  id: number;
  teamId: number;
  team: string | null;
  provider: string;
  providerName: string;
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

export interface ConnectionListing {
  connections: Connection[];
}

/** GET /api/connections/:id/browse: what the connected account can reach. */
export interface BrowseListing {
  items: Browsable[];
}

/** DELETE /api/connections/:id: forgotten here, and whether the provider revoked it too. */
export interface Disconnected {
  disconnected: number;
  revokedAtProvider: boolean;
  note: string | null;
}

/** The admin API's answers as the dashboard reads them (docs/admin-api.md). Declared here rather than imported from the server's modules: the page is compiled for the browser, without Node's types. */

export interface Warning {
  code: string;
  message: string;
  hint?: string;
}

export interface BackupRun {
  trigger: string;
  startedAt: string;
  finishedAt: string;
  ok: boolean;
  archive?: string;
  location?: string;
  size?: number;
  durationMs: number;
  encryption?: string | null;
  warnings?: Warning[];
  error?: { code: string; message: string; hint?: string };
}

export interface BackupStatus {
  running: boolean;
  progress: { trigger: string; startedAt: string; phase: string; bytes: number; totalBytes: number } | null;
  nextRun: string | null;
  lastResult: BackupRun | null;
  warnings: Warning[];
}

export interface Overview {
  version: string;
  schemaVersion: number;
  licence: { state: string; licensee: string | null; expiresAt: string | null; daysLeft: number | null };
  volume: { path: string; bytes: number; backupsBytes: number; freeBytes: number; totalBytes: number };
  libraries: { total: number; byState: Record<string, number> };
  backup: { last: BackupRun | null; nextRun: string | null; running: boolean; newestArchive: { name: string; modifiedAt: string; location: string } | null };
  warnings: Warning[];
}

export interface Archive {
  name: string;
  size: number;
  modifiedAt: string;
  location: string;
}

export interface ArchivePreview {
  name?: string;
  uploadId?: string;
  encryption: string | null;
  encrypted?: boolean;
  createdAt?: string;
  appVersion?: string;
  schemaVersion?: number;
  libraries?: Array<{ id: string; title: string; state: string; snippets: number }>;
  size?: number;
  restorable: boolean | null;
  reason: string | null;
  needsMigration?: boolean;
}

export interface RestoreOutcome {
  result: "applied" | "failed";
  source: string;
  requestedBy: string | null;
  stagedAt: string | null;
  finishedAt: string;
  preRestoreDir?: string | null;
  archiveCreatedAt?: string;
  libraries?: number;
  error?: string;
  keptIn?: string;
}

export interface Library {
  id: string;
  title: string;
  source: string;
  sourceUrl: string | null;
  private: boolean;
  team: string | null;
  processing: string;
  reason: string | null;
  totalSnippets: number;
  branch: string;
  versions: string[];
  lastUpdateDate: string;
}

export interface Team {
  id: number;
  name: string;
  plan: string;
  users: number;
}

export interface User {
  id: number;
  team_id: number;
  team: string;
  email: string;
  role: string;
}

export interface ApiKey {
  prefix: string;
  name: string | null;
  email: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface ProviderSettings {
  kind: string;
  name: string;
  connects: "git" | "wiki";
  clientId: string;
  clientSecretSet: boolean;
  authorizeUrl: string;
  tokenUrl: string;
  apiBase: string;
  scopes: string;
  gitHosts: string[];
}

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
  hosts: string[];
  sites: Array<{ cloudId: string; siteUrl: string }>;
}

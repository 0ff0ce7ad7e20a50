import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { deleteSecret, getSecret, putSecret } from "./secrets-table.js";
import { normaliseSiteUrl } from "../record-values.js";
import type { GrantTokens, NewGrant, OAuthGrant, OAuthState, OAuthTokens, TokenRefresh } from "../records.js";

const hashOf = (state: string) => createHash("sha256").update(state).digest("hex");
const accessName = (grantId: number) => `oauth:${grantId}:access`;
const refreshName = (grantId: number) => `oauth:${grantId}:refresh`;

export function createOAuthState(db: Database.Database, state: string, pending: OAuthState, ttlSeconds: number): void {
  db.prepare("DELETE FROM oauth_states WHERE expires_at < strftime('%Y-%m-%dT%H:%M:%fZ','now')").run();
  db.prepare("INSERT INTO oauth_states (state_hash, provider, team_id, verifier, redirect_uri, started_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
    hashOf(state),
    pending.provider,
    pending.teamId,
    pending.verifier,
    pending.redirectUri,
    pending.startedBy,
    new Date(Date.now() + ttlSeconds * 1000).toISOString(),
  );
}

/** The pending authorization of `state`, removed so that it can be used once; undefined when unknown or stale. */
export function takeOAuthState(db: Database.Database, state: string): OAuthState | undefined {
  return db
    .transaction(() => {
      const row = db.prepare("SELECT provider, team_id, verifier, redirect_uri, started_by, expires_at FROM oauth_states WHERE state_hash = ?").get(hashOf(state)) as
        { provider: string; team_id: number; verifier: string; redirect_uri: string; started_by: string; expires_at: string } | undefined;
      if (!row) return undefined;
      db.prepare("DELETE FROM oauth_states WHERE state_hash = ?").run(hashOf(state));
      if (Date.parse(row.expires_at) < Date.now()) return undefined;
      return { provider: row.provider, teamId: row.team_id, verifier: row.verifier, redirectUri: row.redirect_uri, startedBy: row.started_by };
    })
    .immediate();
}

/**
 * Store a new grant and the connections it makes, all or nothing. It replaces the team's previous connection of the
 * same kind (a git account; the same wiki sites), whether pasted or connected: Reconnect is Connect again.
 */
export function saveOAuthGrant(db: Database.Database, key: Buffer, grant: NewGrant): number {
  return db
    .transaction(() => {
      const id = Number(
        db
          .prepare("INSERT INTO oauth_grants (team_id, provider, account, scopes, expires_at) VALUES (?, ?, ?, ?, ?)")
          .run(grant.teamId, grant.provider, grant.account, grant.scopes, grant.tokens.expiresAt ?? null).lastInsertRowid,
      );
      putTokens(db, key, id, grant.tokens);
      const { target } = grant;
      if (target.kind === "git") {
        dropConnections(db, "SELECT id, secret_name, grant_id FROM connections WHERE team_id = ? AND kind = 'git'", grant.teamId);
        db.prepare("INSERT INTO connections (team_id, kind, secret_name, hosts, grant_id) VALUES (?, 'git', ?, ?, ?)").run(
          grant.teamId,
          `oauth:${id}:git`,
          JSON.stringify(target.hosts.map((h) => h.toLowerCase())),
          id,
        );
      } else {
        for (const site of target.sites) {
          dropConnections(db, "SELECT id, secret_name, grant_id FROM connections WHERE team_id = ? AND kind = 'wiki' AND cloud_id = ?", grant.teamId, site.cloudId);
          db.prepare("INSERT INTO connections (team_id, kind, cloud_id, site_url, api_base, secret_name, grant_id) VALUES (?, 'wiki', ?, ?, ?, ?, ?)").run(
            grant.teamId,
            site.cloudId,
            normaliseSiteUrl(site.siteUrl),
            site.apiBase,
            `oauth:${id}:wiki:${site.cloudId}`,
            id,
          );
        }
      }
      dropOrphanGrants(db);
      return id;
    })
    .immediate();
}

function putTokens(db: Database.Database, key: Buffer, grantId: number, tokens: OAuthTokens): void {
  putSecret(db, key, accessName(grantId), tokens.accessToken);
  if (tokens.refreshToken) putSecret(db, key, refreshName(grantId), tokens.refreshToken);
}

/** Remove connections (and a pasted token's secret) that a new grant replaces. */
function dropConnections(db: Database.Database, select: string, ...args: unknown[]): void {
  for (const row of db.prepare(select).all(...args) as Array<{ id: number; secret_name: string; grant_id: number | null }>) {
    if (row.grant_id === null) deleteSecret(db, row.secret_name);
    db.prepare("DELETE FROM connections WHERE id = ?").run(row.id);
  }
}

/** A grant none of whose connections is left (all replaced) is deleted with its tokens. */
export function dropOrphanGrants(db: Database.Database): void {
  const orphans = db.prepare("SELECT id FROM oauth_grants g WHERE NOT EXISTS (SELECT 1 FROM connections c WHERE c.grant_id = g.id)").pluck().all() as number[];
  for (const id of orphans) removeGrantRows(db, id);
}

function removeGrantRows(db: Database.Database, grantId: number): void {
  deleteSecret(db, accessName(grantId));
  deleteSecret(db, refreshName(grantId));
  db.prepare("DELETE FROM connections WHERE grant_id = ?").run(grantId);
  db.prepare("DELETE FROM oauth_grants WHERE id = ?").run(grantId);
}

export function oauthGrantTokens(db: Database.Database, key: Buffer, grantId: number): GrantTokens | undefined {
  const row = db.prepare("SELECT provider, expires_at, state FROM oauth_grants WHERE id = ?").get(grantId) as { provider: string; expires_at: string | null; state: string } | undefined;
  const accessToken = row && getSecret(db, key, accessName(grantId));
  if (!row || !accessToken) return undefined;
  return { accessToken, refreshToken: getSecret(db, key, refreshName(grantId)), expiresAt: row.expires_at ?? undefined, state: row.state, provider: row.provider };
}

/** New tokens after a refresh (the refresh token rotates when the provider sends a new one). */
export function updateOAuthTokens(db: Database.Database, key: Buffer, grantId: number, tokens: OAuthTokens): void {
  db.transaction(() => {
    // A grant removed meanwhile (while its provider answered a refresh) gets no tokens back: they would be orphans.
    const changed = db
      .prepare("UPDATE oauth_grants SET expires_at = ?, state = 'active', problem = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?")
      .run(tokens.expiresAt ?? null, grantId).changes;
    if (changed > 0) putTokens(db, key, grantId, tokens);
  }).immediate();
}

/**
 * A refresh, one at a time per grant (`turns`: the store's, as one process alone writes a SQLite volume): the
 * tokens are read when this refresh's turn comes, so that a refresh that waited sees the one before it. No
 * transaction is held across the provider's answer: SQLite's one writer would stop every other write meanwhile.
 */
export async function refreshOAuthTokens(
  db: Database.Database,
  key: Buffer,
  turns: <T>(grantId: number, work: () => Promise<T>) => Promise<T>,
  grantId: number,
  refresh: (current: GrantTokens) => Promise<TokenRefresh>,
): Promise<GrantTokens | undefined> {
  return turns(grantId, async () => {
    const current = oauthGrantTokens(db, key, grantId);
    if (!current) return undefined;
    const outcome = await refresh(current);
    if (outcome === "current") return current;
    if ("revoked" in outcome) {
      markOAuthGrantRevoked(db, grantId, outcome.revoked);
    } else {
      updateOAuthTokens(db, key, grantId, outcome.tokens);
    }
    return oauthGrantTokens(db, key, grantId);
  });
}

/** The provider refused to refresh (revoked, expired): kept, to be shown, until reconnected or disconnected. */
export function markOAuthGrantRevoked(db: Database.Database, grantId: number, problem: string): void {
  db.prepare("UPDATE oauth_grants SET state = 'revoked', problem = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?").run(problem, grantId);
}

export function removeOAuthGrant(db: Database.Database, grantId: number): void {
  db.transaction(() => removeGrantRows(db, grantId)).immediate();
}

export function listOAuthGrants(db: Database.Database): OAuthGrant[] {
  return selectGrants(db);
}

/** One grant by id, without its tokens. */
export function findOAuthGrant(db: Database.Database, grantId: number): OAuthGrant | undefined {
  return selectGrants(db, grantId)[0];
}

/** Grants (all, or the one with `grantId`) with the hosts and sites of their connections. */
function selectGrants(db: Database.Database, grantId?: number): OAuthGrant[] {
  const args = grantId === undefined ? [] : [grantId];
  const grants = db
    .prepare(`SELECT id, team_id, provider, account, scopes, expires_at, state, problem, created_at FROM oauth_grants${args.length ? " WHERE id = ?" : ""} ORDER BY team_id, provider`)
    .all(...args) as Array<{
    id: number;
    team_id: number;
    provider: string;
    account: string;
    scopes: string;
    expires_at: string | null;
    state: "active" | "revoked";
    problem: string | null;
    created_at: string;
  }>;
  const connections = db.prepare(`SELECT grant_id, kind, hosts, cloud_id, site_url FROM connections WHERE grant_id IS NOT NULL${args.length ? " AND grant_id = ?" : ""}`).all(...args) as Array<{
    grant_id: number;
    kind: string;
    hosts: string | null;
    cloud_id: string | null;
    site_url: string | null;
  }>;
  return grants.map((g) => {
    const mine = connections.filter((c) => c.grant_id === g.id);
    return {
      id: g.id,
      teamId: g.team_id,
      provider: g.provider,
      account: g.account,
      scopes: g.scopes,
      expiresAt: g.expires_at,
      state: g.state,
      problem: g.problem,
      createdAt: g.created_at,
      hosts: mine.flatMap((c) => (c.kind === "git" && c.hosts ? (JSON.parse(c.hosts) as string[]) : [])),
      sites: mine.filter((c) => c.kind === "wiki").map((c) => ({ cloudId: c.cloud_id!, siteUrl: c.site_url! })),
    };
  });
}

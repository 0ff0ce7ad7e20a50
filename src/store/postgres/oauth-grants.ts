import { normaliseSiteUrl } from "../record-values.js";
import type { GrantTokens, NewGrant, OAuthGrant, OAuthTokens, TokenRefresh } from "../records.js";
import { getSecret, putSecret } from "./settings.js";
import { accessName, dropConnections, dropOrphanGrants, lockTeamConnections, refreshName, removeGrantRows } from "./connection-rows.js";
import { NOW_TEXT } from "./schema-text.js";
import type { PgContext, Sql } from "./sql.js";

/**
 * Store a new grant and the connections it makes, all or nothing. It replaces the team's previous connection of the
 * same kind (a git account; the same wiki sites), whether pasted or connected: Reconnect is Connect again.
 */
export async function saveOAuthGrant({ transaction, key }: PgContext, grant: NewGrant): Promise<number> {
  return transaction(async (tx) => {
    await lockTeamConnections(tx, grant.teamId);
    const inserted = await tx.row<{ id: number }>("INSERT INTO oauth_grants (team_id, provider, account, scopes, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING id", [
      grant.teamId,
      grant.provider,
      grant.account,
      grant.scopes,
      grant.tokens.expiresAt ?? null,
    ]);
    const id = inserted!.id;
    await putTokens(tx, key, id, grant.tokens);
    const { target } = grant;
    if (target.kind === "git") {
      await dropConnections(tx, "team_id = $1 AND kind = 'git'", [grant.teamId]);
      await tx.run("INSERT INTO connections (team_id, kind, secret_name, hosts, grant_id) VALUES ($1, 'git', $2, $3, $4)", [
        grant.teamId,
        `oauth:${id}:git`,
        JSON.stringify(target.hosts.map((h) => h.toLowerCase())),
        id,
      ]);
    } else {
      for (const site of target.sites) {
        await dropConnections(tx, "team_id = $1 AND kind = 'wiki' AND cloud_id = $2", [grant.teamId, site.cloudId]);
        await tx.run("INSERT INTO connections (team_id, kind, cloud_id, site_url, api_base, secret_name, grant_id) VALUES ($1, 'wiki', $2, $3, $4, $5, $6)", [
          grant.teamId,
          site.cloudId,
          normaliseSiteUrl(site.siteUrl),
          site.apiBase,
          `oauth:${id}:wiki:${site.cloudId}`,
          id,
        ]);
      }
    }
    await dropOrphanGrants(tx);
    return id;
  });
}

async function putTokens(tx: Sql, key: Buffer, grantId: number, tokens: OAuthTokens): Promise<void> {
  await putSecret(tx, key, accessName(grantId), tokens.accessToken);
  if (tokens.refreshToken) await putSecret(tx, key, refreshName(grantId), tokens.refreshToken);
}

/** A grant's tokens, unsealed, with its state; undefined when the grant (or its access token) is gone. */
export async function oauthGrantTokens(sql: Sql, key: Buffer, grantId: number): Promise<GrantTokens | undefined> {
  const row = await sql.row<{ provider: string; expires_at: string | null; state: string }>("SELECT provider, expires_at, state FROM oauth_grants WHERE id = $1", [grantId]);
  const accessToken = row && (await getSecret(sql, key, accessName(grantId)));
  if (!row || !accessToken) return undefined;
  return { accessToken, refreshToken: await getSecret(sql, key, refreshName(grantId)), expiresAt: row.expires_at ?? undefined, state: row.state, provider: row.provider };
}

/** New tokens after a refresh (the refresh token rotates when the provider sends a new one). */
export async function updateOAuthTokens({ transaction, key }: PgContext, grantId: number, tokens: OAuthTokens): Promise<void> {
  await transaction(async (tx) => {
    // The grant's row first (as removeGrantRows locks it): a grant removed meanwhile gets no tokens back.
    const changed = await tx.run(`UPDATE oauth_grants SET expires_at = $1, state = 'active', problem = NULL, updated_at = ${NOW_TEXT} WHERE id = $2`, [tokens.expiresAt ?? null, grantId]);
    if (changed > 0) await putTokens(tx, key, grantId, tokens);
  });
}

/**
 * A refresh under the grant's row lock (FOR UPDATE): a second refresh of the grant, on this replica or another,
 * waits for this transaction, then reads the tokens it saved. The lock order is the grant's row, then its secrets,
 * as every other change of a grant takes them.
 */
export async function refreshOAuthTokens({ transaction, key }: PgContext, grantId: number, refresh: (current: GrantTokens) => Promise<TokenRefresh>): Promise<GrantTokens | undefined> {
  return transaction(async (tx) => {
    if (!(await tx.row("SELECT 1 FROM oauth_grants WHERE id = $1 FOR UPDATE", [grantId]))) return undefined;
    const current = await oauthGrantTokens(tx, key, grantId);
    if (!current) return undefined;
    const outcome = await refresh(current);
    if (outcome === "current") return current;
    if ("revoked" in outcome) {
      await markOAuthGrantRevoked(tx, grantId, outcome.revoked);
    } else {
      await tx.run(`UPDATE oauth_grants SET expires_at = $1, state = 'active', problem = NULL, updated_at = ${NOW_TEXT} WHERE id = $2`, [outcome.tokens.expiresAt ?? null, grantId]);
      await putTokens(tx, key, grantId, outcome.tokens);
    }
    return oauthGrantTokens(tx, key, grantId);
  });
}

/** The provider refused to refresh (revoked, expired): kept, to be shown, until reconnected or disconnected. */
export async function markOAuthGrantRevoked(sql: Sql, grantId: number, problem: string): Promise<void> {
  await sql.run(`UPDATE oauth_grants SET state = 'revoked', problem = $1, updated_at = ${NOW_TEXT} WHERE id = $2`, [problem, grantId]);
}

/** A grant with its connections and tokens, its team's connections held meanwhile (as saveGrant holds them). */
export async function removeOAuthGrant({ transaction }: PgContext, grantId: number): Promise<void> {
  await transaction(async (tx) => {
    const grant = await tx.row<{ team_id: number }>("SELECT team_id FROM oauth_grants WHERE id = $1", [grantId]);
    if (!grant) return;
    await lockTeamConnections(tx, grant.team_id);
    await removeGrantRows(tx, grantId);
  });
}

interface GrantRow {
  id: number;
  team_id: number;
  provider: string;
  account: string;
  scopes: string;
  expires_at: string | null;
  state: "active" | "revoked";
  problem: string | null;
  created_at: string;
}

/** A grant's row with one of its connections (or none: every connection column null). */
interface GrantConnectionRow extends GrantRow {
  connection_id: number | null;
  kind: string | null;
  hosts: string | null;
  cloud_id: string | null;
  site_url: string | null;
}

/**
 * Grants (all, or the one with `grantId`) by team then provider, with the hosts and sites of their connections: one
 * statement, so that the connections are those of the grants read, whatever another replica changes meanwhile.
 */
export async function selectOAuthGrants(sql: Sql, grantId?: number): Promise<OAuthGrant[]> {
  const rows = await sql.rows<GrantConnectionRow>(
    `SELECT g.id, g.team_id, g.provider, g.account, g.scopes, g.expires_at, g.state, g.problem, g.created_at,
            c.id AS connection_id, c.kind, c.hosts, c.cloud_id, c.site_url
     FROM oauth_grants g LEFT JOIN connections c ON c.grant_id = g.id${grantId === undefined ? "" : " WHERE g.id = $1"}
     ORDER BY g.team_id, g.provider COLLATE "C", g.id, c.id`,
    grantId === undefined ? [] : [grantId],
  );
  const grants = new Map<number, OAuthGrant>();
  for (const r of rows) {
    let grant = grants.get(r.id);
    if (!grant) {
      grant = {
        id: r.id,
        teamId: r.team_id,
        provider: r.provider,
        account: r.account,
        scopes: r.scopes,
        expiresAt: r.expires_at,
        state: r.state,
        problem: r.problem,
        createdAt: r.created_at,
        hosts: [],
        sites: [],
      };
      grants.set(r.id, grant);
    }
    if (r.kind === "git" && r.hosts) grant.hosts.push(...(JSON.parse(r.hosts) as string[]));
    if (r.kind === "wiki") grant.sites.push({ cloudId: r.cloud_id!, siteUrl: r.site_url! });
  }
  return [...grants.values()];
}

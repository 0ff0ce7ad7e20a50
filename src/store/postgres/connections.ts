import { CONNECTION_COLUMNS, toConnectionListing, type ConnectionRow } from "../connection-row.js";
import { LdsError } from "../../errors.js";
import { action } from "../../hints.js";
import { normaliseSiteUrl } from "../record-values.js";
import type { ConnectionListing, GitConnectionLookup, WikiConnection } from "../records.js";
import { deleteSecret, getSecret, putSecret } from "./settings.js";
import { accessName, dropOrphanGrants, lockTeamConnections } from "./connection-rows.js";
import type { PgContext, Sql } from "./sql.js";

/** Connect a team's wiki account: the token is sealed; the API base is fixed here, by an operator, not by requests. */
export async function addWikiConnection({ transaction, key }: PgContext, c: Omit<WikiConnection, "id"> & { token: string }): Promise<number> {
  const secretName = `team:${c.teamId}:wiki:${c.cloudId}`;
  return transaction(async (tx) => {
    await lockTeamConnections(tx, c.teamId);
    await tx.run("DELETE FROM connections WHERE team_id = $1 AND kind = 'wiki' AND cloud_id = $2", [c.teamId, c.cloudId]);
    // A pasted token replaces an OAuth connection of that site; a grant left with no connection goes with its tokens.
    await dropOrphanGrants(tx);
    await putSecret(tx, key, secretName, c.token);
    const row = await tx.row<{ id: number }>("INSERT INTO connections (team_id, kind, cloud_id, site_url, api_base, secret_name) VALUES ($1, 'wiki', $2, $3, $4, $5) RETURNING id", [
      c.teamId,
      c.cloudId,
      normaliseSiteUrl(c.siteUrl),
      c.apiBase,
      secretName,
    ]);
    return row!.id;
  });
}

/**
 * Connect a team's git account: its token is used when a submission or refresh brings no gitToken, and only for
 * repositories on `hosts` (host[:port]), so that a submission naming another host never receives it.
 */
export async function addGitConnection({ transaction, key }: PgContext, teamId: number, token: string, hosts: string[]): Promise<void> {
  const secretName = `team:${teamId}:git`;
  await transaction(async (tx) => {
    await lockTeamConnections(tx, teamId);
    await tx.run("DELETE FROM connections WHERE team_id = $1 AND kind = 'git'", [teamId]);
    await dropOrphanGrants(tx);
    await putSecret(tx, key, secretName, token);
    await tx.run("INSERT INTO connections (team_id, kind, secret_name, hosts) VALUES ($1, 'git', $2, $3)", [teamId, secretName, JSON.stringify(hosts.map((h) => h.toLowerCase()))]);
  });
}

/**
 * The team's connected git token for a repository on `host`, only if the connection is pinned to that host.
 * A connection made before hosts were recorded (0.3.0) is pinned to the installation's default git host.
 * Otherwise `otherHosts` lists the hosts it is valid for (null: the team has no git connection).
 */
export async function gitConnectionToken(sql: Sql, key: Buffer, teamId: number, host: string, defaultHost: string): Promise<GitConnectionLookup> {
  const row = await sql.row<{ hosts: string | null; grant_id: number | null }>("SELECT hosts, grant_id FROM connections WHERE team_id = $1 AND kind = 'git'", [teamId]);
  if (!row) return { token: undefined, otherHosts: null };
  const hosts = row.hosts ? (JSON.parse(row.hosts) as string[]) : [defaultHost.toLowerCase()];
  if (!hosts.includes(host.toLowerCase())) return { token: undefined, otherHosts: hosts };
  if (row.grant_id !== null) return { token: await getSecret(sql, key, accessName(row.grant_id)), otherHosts: hosts, grantId: row.grant_id };
  return { token: await getSecret(sql, key, `team:${teamId}:git`), otherHosts: hosts };
}

interface WikiRow {
  id: number;
  team_id: number;
  cloud_id: string;
  site_url: string;
  api_base: string;
  grant_id: number | null;
}

export async function findWikiConnection(sql: Sql, teamId: number, cloudId: string): Promise<WikiConnection | undefined> {
  const row = await sql.row<WikiRow>("SELECT id, team_id, cloud_id, site_url, api_base, grant_id FROM connections WHERE team_id = $1 AND kind = 'wiki' AND cloud_id = $2", [teamId, cloudId]);
  return row && { id: row.id, teamId: row.team_id, cloudId: row.cloud_id, siteUrl: row.site_url, apiBase: row.api_base, ...(row.grant_id !== null ? { grantId: row.grant_id } : {}) };
}

export async function wikiToken(sql: Sql, key: Buffer, connection: WikiConnection): Promise<string> {
  const name = connection.grantId !== undefined ? accessName(connection.grantId) : `team:${connection.teamId}:wiki:${connection.cloudId}`;
  const token = await getSecret(sql, key, name);
  if (!token) throw new LdsError("forbidden", "The wiki connection has no token any more.", { hint: `Connect the wiki account again: ${action("connection.addWiki")}.` });
  return token;
}

/** Every team's connections by team, kind and id, never a token. */
export async function listConnections(sql: Sql): Promise<ConnectionListing[]> {
  return (await sql.rows<ConnectionRow>(`SELECT ${CONNECTION_COLUMNS} FROM connections ORDER BY team_id, kind COLLATE "C", id`)).map(toConnectionListing);
}

/** Remove a pasted connection and its sealed token (an OAuth one is removed with its grant). */
export async function removePastedConnection({ transaction }: PgContext, id: number): Promise<boolean> {
  return transaction(async (tx) => {
    const removed = await tx.row<{ secret_name: string }>("DELETE FROM connections WHERE id = $1 AND grant_id IS NULL RETURNING secret_name", [id]);
    if (!removed) return false;
    await deleteSecret(tx, removed.secret_name);
    return true;
  });
}

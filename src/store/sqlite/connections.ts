import { CONNECTION_COLUMNS, toConnectionListing, type ConnectionRow } from "../connection-row.js";
import type Database from "better-sqlite3";
import { LdsError } from "../../errors.js";
import { deleteSecret, getSecret, putSecret } from "./secrets-table.js";
import { action } from "../../hints.js";
import { normaliseSiteUrl } from "../record-values.js";
import { dropOrphanGrants } from "./oauth.js";
import type { ConnectionListing, GitConnectionLookup, WikiConnection } from "../records.js";

/** Connect a team's wiki account: the token is sealed; the API base is fixed here, by an operator, not by requests. */
export function addWikiConnection(db: Database.Database, key: Buffer, c: Omit<WikiConnection, "id"> & { token: string }): number {
  const secretName = `team:${c.teamId}:wiki:${c.cloudId}`;
  return db
    .transaction(() => {
      db.prepare("DELETE FROM connections WHERE team_id = ? AND kind = 'wiki' AND cloud_id = ?").run(c.teamId, c.cloudId);
      // A pasted token replaces an OAuth connection of that site; a grant left with no connection goes with its tokens.
      dropOrphanGrants(db);
      putSecret(db, key, secretName, c.token);
      return Number(
        db
          .prepare("INSERT INTO connections (team_id, kind, cloud_id, site_url, api_base, secret_name) VALUES (?, 'wiki', ?, ?, ?, ?)")
          .run(c.teamId, c.cloudId, normaliseSiteUrl(c.siteUrl), c.apiBase, secretName).lastInsertRowid,
      );
    })
    .immediate();
}

/**
 * Connect a team's git account: its token is used when a submission or refresh brings no gitToken, and only for
 * repositories on `hosts` (host[:port]), so that a submission naming another host never receives it.
 */
export function addGitConnection(db: Database.Database, key: Buffer, teamId: number, token: string, hosts: string[]): void {
  const secretName = `team:${teamId}:git`;
  db.transaction(() => {
    db.prepare("DELETE FROM connections WHERE team_id = ? AND kind = 'git'").run(teamId);
    dropOrphanGrants(db);
    putSecret(db, key, secretName, token);
    db.prepare("INSERT INTO connections (team_id, kind, secret_name, hosts) VALUES (?, 'git', ?, ?)").run(teamId, secretName, JSON.stringify(hosts.map((h) => h.toLowerCase())));
  }).immediate();
}

/**
 * The team's connected git token for a repository on `host`, only if the connection is pinned to that host.
 * A connection made before hosts were recorded (0.3.0) is pinned to the installation's default git host.
 * Otherwise `otherHosts` lists the hosts it is valid for (null: the team has no git connection).
 */
export function gitConnectionToken(db: Database.Database, key: Buffer, teamId: number, host: string, defaultHost: string): GitConnectionLookup {
  const row = db.prepare("SELECT hosts, grant_id FROM connections WHERE team_id = ? AND kind = 'git'").get(teamId) as { hosts: string | null; grant_id: number | null } | undefined;
  if (!row) return { token: undefined, otherHosts: null };
  const hosts = row.hosts ? (JSON.parse(row.hosts) as string[]) : [defaultHost.toLowerCase()];
  if (!hosts.includes(host.toLowerCase())) return { token: undefined, otherHosts: hosts };
  if (row.grant_id !== null) return { token: getSecret(db, key, `oauth:${row.grant_id}:access`), otherHosts: hosts, grantId: row.grant_id };
  return { token: getSecret(db, key, `team:${teamId}:git`), otherHosts: hosts };
}

export function findWikiConnection(db: Database.Database, teamId: number, cloudId: string): WikiConnection | undefined {
  const row = db.prepare("SELECT id, team_id, cloud_id, site_url, api_base, grant_id FROM connections WHERE team_id = ? AND kind = 'wiki' AND cloud_id = ?").get(teamId, cloudId) as
    { id: number; team_id: number; cloud_id: string; site_url: string; api_base: string; grant_id: number | null } | undefined;
  return row && { id: row.id, teamId: row.team_id, cloudId: row.cloud_id, siteUrl: row.site_url, apiBase: row.api_base, ...(row.grant_id !== null ? { grantId: row.grant_id } : {}) };
}

export function wikiToken(db: Database.Database, key: Buffer, connection: WikiConnection): string {
  const name = connection.grantId !== undefined ? `oauth:${connection.grantId}:access` : `team:${connection.teamId}:wiki:${connection.cloudId}`;
  const token = getSecret(db, key, name);
  if (!token) throw new LdsError("forbidden", "The wiki connection has no token any more.", { hint: `Connect the wiki account again: ${action("connection.addWiki")}.` });
  return token;
}

export function addTeamProject(db: Database.Database, teamId: number, projectId: string, name: string): void {
  db.prepare("INSERT INTO team_projects (team_id, project_id, name) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET name = excluded.name").run(teamId, projectId, name);
}

export function teamHasProject(db: Database.Database, teamId: number, projectId: string): boolean {
  return db.prepare("SELECT 1 FROM team_projects WHERE team_id = ? AND project_id = ?").get(teamId, projectId) !== undefined;
}

export function listConnections(db: Database.Database): ConnectionListing[] {
  return (db.prepare(`SELECT ${CONNECTION_COLUMNS} FROM connections ORDER BY team_id, kind, id`).all() as ConnectionRow[]).map(toConnectionListing);
}

/** Remove a pasted connection and its sealed token (an OAuth one is removed with its grant). */
export function removePastedConnection(db: Database.Database, id: number): boolean {
  return db
    .transaction(() => {
      const row = db.prepare("SELECT secret_name FROM connections WHERE id = ? AND grant_id IS NULL").get(id) as { secret_name: string } | undefined;
      if (!row) return false;
      deleteSecret(db, row.secret_name);
      db.prepare("DELETE FROM connections WHERE id = ?").run(id);
      return true;
    })
    .immediate();
}

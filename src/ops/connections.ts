import { LdsError } from "../errors.js";
import type { ConnectionListing, Team } from "../store/records.js";
import type { Store } from "../store/store.js";
import { recordAccountChange } from "./account-audit.js";
import type { Actor } from "./actor.js";
import { forgetGrant } from "./oauth-connections.js";

// Connections made with a pasted token (OAuth ones are made by the dashboard's Connect: oauth-connections.ts). The token
// is sealed by the store and never reaches the audit log: the record says where it may be sent.

/** A team's git account, valid for repositories on `hosts` only. */
export async function addGitConnection(store: Store, actor: Actor, teamNameOrId: string, token: string, hosts: string[]): Promise<Team> {
  const team = await store.teams.require(teamNameOrId);
  await store.connections.addGit(team.id, token, hosts);
  await recordAccountChange(store, actor, "connection.add", `team:${team.id}`, { kind: "git", hosts });
  return team;
}

/** A team's wiki account (a Confluence cloud site); its token goes only to `apiBase`. */
export async function addWikiConnection(store: Store, actor: Actor, wiki: { team: string; cloudId: string; siteUrl: string; apiBase: string; token: string }): Promise<Team> {
  const team = await store.teams.require(wiki.team);
  const id = await store.connections.addWiki({ teamId: team.id, cloudId: wiki.cloudId, siteUrl: wiki.siteUrl, apiBase: wiki.apiBase, token: wiki.token });
  await recordAccountChange(store, actor, "connection.add", `team:${team.id}`, { kind: "wiki", connection: id, cloudId: wiki.cloudId, siteUrl: wiki.siteUrl, apiBase: wiki.apiBase });
  return team;
}

export interface RemovedConnection {
  connection: ConnectionListing;
  /** Set when the connection was made by OAuth: its grant was disconnected (and revoked at the provider where it can be). */
  disconnected?: { revokedAtProvider: boolean; note: string | null };
}

/** Remove a connection: a pasted token is deleted; an OAuth one is disconnected, with every connection of its grant. */
export async function removeConnection(store: Store, actor: Actor, connectionId: number): Promise<RemovedConnection> {
  const connection = (await store.connections.list()).find((c) => c.id === connectionId);
  // No hint: the shell that asked knows where its user lists connections.
  if (!connection) throw new LdsError("connection_not_found", `No connection ${connectionId}.`);
  let disconnected: RemovedConnection["disconnected"];
  if (connection.grantId === null) await store.connections.removePasted(connection.id);
  else {
    disconnected = await forgetGrant(store, connection.grantId);
  }
  await recordAccountChange(store, actor, "connection.disconnect", `connection:${connection.id}`, {
    kind: connection.kind,
    ...(connection.grantId === null ? {} : { grant: connection.grantId, revokedAtProvider: disconnected!.revokedAtProvider }),
  });
  return { connection, disconnected };
}

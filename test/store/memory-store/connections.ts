import { LdsError } from "../../../src/errors.js";
import { normaliseSiteUrl } from "../../../src/store/record-values.js";
import type { WikiConnection } from "../../../src/store/records.js";
import type { ConnectionStore } from "../../../src/store/store.js";
import { deleteSecret, getSecret, putSecret } from "./secrets.js";
import { nextId, now, type ConnectionRecord, type MemoryTables } from "./tables.js";

export const accessName = (grantId: number) => `oauth:${grantId}:access`;
export const refreshName = (grantId: number) => `oauth:${grantId}:refresh`;

/** Add a connection record; the id it gets. */
export function insertConnection(tables: MemoryTables, record: Omit<ConnectionRecord, "id" | "createdAt">): number {
  const id = nextId(tables, "connections");
  tables.connections.set(id, { ...record, id, createdAt: now() });
  return id;
}

/** Remove the connections `which` picks that a new one replaces (a pasted one with its token). */
export function dropConnections(tables: MemoryTables, which: (c: ConnectionRecord) => boolean): void {
  for (const c of [...tables.connections.values()].filter(which)) {
    if (c.grantId === null) deleteSecret(tables, c.secretName);
    tables.connections.delete(c.id);
  }
}

/** A grant none of whose connections is left (all replaced) goes with its tokens. */
export function dropOrphanGrants(tables: MemoryTables): void {
  for (const grantId of [...tables.grants.keys()]) {
    if (![...tables.connections.values()].some((c) => c.grantId === grantId)) removeGrant(tables, grantId);
  }
}

/** A grant, its tokens and its connections. */
export function removeGrant(tables: MemoryTables, grantId: number): void {
  deleteSecret(tables, accessName(grantId));
  deleteSecret(tables, refreshName(grantId));
  for (const c of [...tables.connections.values()]) if (c.grantId === grantId) tables.connections.delete(c.id);
  tables.grants.delete(grantId);
}

const asWiki = (c: ConnectionRecord): WikiConnection => ({
  id: c.id,
  teamId: c.teamId,
  cloudId: c.cloudId!,
  siteUrl: c.siteUrl!,
  apiBase: c.apiBase!,
  ...(c.grantId !== null ? { grantId: c.grantId } : {}),
});

export function connectionStore(tables: MemoryTables): ConnectionStore {
  const wikiOf = (teamId: number, cloudId: string) => [...tables.connections.values()].find((c) => c.teamId === teamId && c.kind === "wiki" && c.cloudId === cloudId);
  return {
    addWiki: async (c) => {
      const secretName = `team:${c.teamId}:wiki:${c.cloudId}`;
      dropConnections(tables, (old) => old.teamId === c.teamId && old.kind === "wiki" && old.cloudId === c.cloudId);
      dropOrphanGrants(tables);
      putSecret(tables, secretName, c.token);
      return insertConnection(tables, { teamId: c.teamId, kind: "wiki", hosts: [], cloudId: c.cloudId, siteUrl: normaliseSiteUrl(c.siteUrl), apiBase: c.apiBase, secretName, grantId: null });
    },
    addGit: async (teamId, token, hosts) => {
      const secretName = `team:${teamId}:git`;
      dropConnections(tables, (old) => old.teamId === teamId && old.kind === "git");
      dropOrphanGrants(tables);
      putSecret(tables, secretName, token);
      insertConnection(tables, { teamId, kind: "git", hosts: hosts.map((h) => h.toLowerCase()), cloudId: null, siteUrl: null, apiBase: null, secretName, grantId: null });
    },
    gitToken: async (teamId, host) => {
      const c = [...tables.connections.values()].find((x) => x.teamId === teamId && x.kind === "git");
      if (!c) return { token: undefined, otherHosts: null };
      const hosts = [...c.hosts];
      if (!hosts.includes(host.toLowerCase())) return { token: undefined, otherHosts: hosts };
      if (c.grantId !== null) return { token: getSecret(tables, accessName(c.grantId)), otherHosts: hosts, grantId: c.grantId };
      return { token: getSecret(tables, c.secretName), otherHosts: hosts };
    },
    findWiki: async (teamId, cloudId) => {
      const c = wikiOf(teamId, cloudId);
      return c && asWiki(c);
    },
    wikiToken: async (connection) => {
      const name = connection.grantId !== undefined ? accessName(connection.grantId) : `team:${connection.teamId}:wiki:${connection.cloudId}`;
      const token = getSecret(tables, name);
      if (!token) throw new LdsError("forbidden", "The wiki connection has no token any more.");
      return token;
    },
    list: async () =>
      [...tables.connections.values()]
        .sort((a, b) => a.teamId - b.teamId || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0) || a.id - b.id)
        .map((c) => ({ id: c.id, teamId: c.teamId, kind: c.kind, hosts: [...c.hosts], cloudId: c.cloudId, siteUrl: c.siteUrl, apiBase: c.apiBase, grantId: c.grantId, createdAt: c.createdAt })),
    removePasted: async (id) => {
      const c = tables.connections.get(id);
      if (!c || c.grantId !== null) return false;
      deleteSecret(tables, c.secretName);
      tables.connections.delete(id);
      return true;
    },
  };
}

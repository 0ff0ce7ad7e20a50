import { createHash } from "node:crypto";
import { normaliseSiteUrl } from "../../../src/store/record-values.js";
import type { OAuthGrant, OAuthTokens } from "../../../src/store/records.js";
import type { OAuthStore } from "../../../src/store/store.js";
import { accessName, dropOrphanGrants, insertConnection, refreshName, removeGrant, dropConnections } from "./connections.js";
import { getSecret, putSecret } from "./secrets.js";
import { turnsByKey } from "../../../src/util/turns-by-key.js";
import { nextId, now, type GrantRecord, type MemoryTables } from "./tables.js";

const hashOf = (state: string) => createHash("sha256").update(state).digest("hex");

export function oauthStore(tables: MemoryTables): OAuthStore {
  const putTokens = (grantId: number, tokens: OAuthTokens) => {
    putSecret(tables, accessName(grantId), tokens.accessToken);
    // The refresh token rotates only when the provider sends a new one.
    if (tokens.refreshToken) putSecret(tables, refreshName(grantId), tokens.refreshToken);
  };
  const listing = (g: GrantRecord): OAuthGrant => {
    const mine = [...tables.connections.values()].filter((c) => c.grantId === g.id);
    return {
      ...g,
      hosts: mine.flatMap((c) => (c.kind === "git" ? c.hosts : [])),
      sites: mine.filter((c) => c.kind === "wiki").map((c) => ({ cloudId: c.cloudId!, siteUrl: c.siteUrl! })),
    };
  };
  const turns = turnsByKey<number>();
  const store: OAuthStore = {
    createState: async (state, pending, ttlSeconds) => {
      for (const [hash, s] of tables.oauthStates) if (s.expiresAt < Date.now()) tables.oauthStates.delete(hash);
      tables.oauthStates.set(hashOf(state), { ...pending, expiresAt: Date.now() + ttlSeconds * 1000 });
    },
    takeState: async (state) => {
      const found = tables.oauthStates.get(hashOf(state));
      if (!found) return undefined;
      tables.oauthStates.delete(hashOf(state));
      if (found.expiresAt < Date.now()) return undefined;
      const { expiresAt: _, ...pending } = found;
      return pending;
    },
    saveGrant: async (grant) => {
      const id = nextId(tables, "grants");
      tables.grants.set(id, {
        id,
        teamId: grant.teamId,
        provider: grant.provider,
        account: grant.account,
        scopes: grant.scopes,
        expiresAt: grant.tokens.expiresAt ?? null,
        state: "active",
        problem: null,
        createdAt: now(),
      });
      putTokens(id, grant.tokens);
      const { target, teamId } = grant;
      if (target.kind === "git") {
        dropConnections(tables, (c) => c.teamId === teamId && c.kind === "git");
        insertConnection(tables, { teamId, kind: "git", hosts: target.hosts.map((h) => h.toLowerCase()), cloudId: null, siteUrl: null, apiBase: null, secretName: `oauth:${id}:git`, grantId: id });
      } else {
        for (const site of target.sites) {
          dropConnections(tables, (c) => c.teamId === teamId && c.kind === "wiki" && c.cloudId === site.cloudId);
          insertConnection(tables, {
            teamId,
            kind: "wiki",
            hosts: [],
            cloudId: site.cloudId,
            siteUrl: normaliseSiteUrl(site.siteUrl),
            apiBase: site.apiBase,
            secretName: `oauth:${id}:wiki:${site.cloudId}`,
            grantId: id,
          });
        }
      }
      dropOrphanGrants(tables);
      return id;
    },
    tokens: async (grantId) => {
      const g = tables.grants.get(grantId);
      const accessToken = g && getSecret(tables, accessName(grantId));
      if (!g || !accessToken) return undefined;
      return { accessToken, refreshToken: getSecret(tables, refreshName(grantId)), expiresAt: g.expiresAt ?? undefined, state: g.state, provider: g.provider };
    },
    updateTokens: async (grantId, tokens) => {
      const g = tables.grants.get(grantId);
      if (!g) return;
      putTokens(grantId, tokens);
      Object.assign(g, { expiresAt: tokens.expiresAt ?? null, state: "active", problem: null });
    },
    refreshTokens: (grantId, refresh) =>
      turns(grantId, async () => {
        const current = await store.tokens(grantId);
        if (!current) return undefined;
        const outcome = await refresh(current);
        if (outcome === "current") return current;
        if ("revoked" in outcome) await store.markRevoked(grantId, outcome.revoked);
        else await store.updateTokens(grantId, outcome.tokens);
        return store.tokens(grantId);
      }),
    markRevoked: async (grantId, problem) => {
      const g = tables.grants.get(grantId);
      if (g) Object.assign(g, { state: "revoked", problem });
    },
    remove: async (grantId) => removeGrant(tables, grantId),
    list: async () => [...tables.grants.values()].sort((a, b) => a.teamId - b.teamId || (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0)).map(listing),
    find: async (grantId) => {
      const g = tables.grants.get(grantId);
      return g && listing(g);
    },
  };
  return store;
}

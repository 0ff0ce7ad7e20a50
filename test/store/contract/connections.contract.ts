import { describe, expect, it } from "vitest";
import { expectLdsError, freshStore, type OpenStore } from "./harness.js";
import type { GrantTokens, TokenRefresh } from "../../../src/store/records.js";

const wiki = (teamId: number, cloudId = "cloud-1", token = "wiki-token-1") => ({
  teamId,
  cloudId,
  siteUrl: "https://Acme.Atlassian.Net/",
  apiBase: `https://api.example.test/ex/confluence/${cloudId}`,
  token,
});

/** connections: tokens sealed, never listed; a team has one git connection and one per wiki site; pasted ones removable. */
export function describeConnections(open: OpenStore): void {
  describe("connections", () => {
    const t = freshStore(open);
    const team = async (name = "acme") => (await t.store.teams.create(name, "pro")).id;

    it("a git token goes only to the hosts it was connected for (any case); without a connection there are no hosts", async () => {
      const acme = await team();
      expect(await t.store.connections.gitToken(acme, "github.com", "github.com")).toEqual({ token: undefined, otherHosts: null });
      await t.store.connections.addGit(acme, "git-token-1", ["GitHub.com", "git.acme.test:8443"]);
      expect(await t.store.connections.gitToken(acme, "GITHUB.COM", "github.com")).toEqual({ token: "git-token-1", otherHosts: ["github.com", "git.acme.test:8443"] });
      expect(await t.store.connections.gitToken(acme, "git.acme.test:8443", "github.com")).toMatchObject({ token: "git-token-1" });
      expect(await t.store.connections.gitToken(acme, "gitlab.com", "github.com")).toEqual({ token: undefined, otherHosts: ["github.com", "git.acme.test:8443"] });
    });

    it("a team's second git connection replaces its first; teams do not share connections", async () => {
      const acme = await team();
      const other = await team("other");
      await t.store.connections.addGit(acme, "git-token-1", ["github.com"]);
      await t.store.connections.addGit(acme, "git-token-2", ["gitlab.com"]);
      expect(await t.store.connections.gitToken(acme, "gitlab.com", "github.com")).toMatchObject({ token: "git-token-2" });
      expect(await t.store.connections.gitToken(acme, "github.com", "github.com")).toEqual({ token: undefined, otherHosts: ["gitlab.com"] });
      expect(await t.store.connections.gitToken(other, "gitlab.com", "github.com")).toEqual({ token: undefined, otherHosts: null });
      expect((await t.store.connections.list()).filter((c) => c.kind === "git")).toHaveLength(1);
    });

    it("a team's git connection replaced by several callers at once: each succeeds, one connection is left, with its own token", async () => {
      const acme = await team();
      const hosts = [1, 2, 3, 4].map((n) => `git-${n}.test`);
      await Promise.all(hosts.map((host, n) => t.store.connections.addGit(acme, `git-token-${n}`, [host])));
      const left = await t.store.connections.list();
      expect(left).toHaveLength(1);
      const n = hosts.indexOf(left[0]!.hosts[0]!);
      expect(await t.store.connections.gitToken(acme, hosts[n]!, "github.com")).toEqual({ token: `git-token-${n}`, otherHosts: [hosts[n]] });
    });

    it("keeps a wiki connection per team and site: the site normalised, its token sealed and unsealed on demand, a new one replacing the old", async () => {
      const acme = await team();
      const id = await t.store.connections.addWiki(wiki(acme));
      const found = await t.store.connections.findWiki(acme, "cloud-1");
      expect(found).toEqual({ id, teamId: acme, cloudId: "cloud-1", siteUrl: "https://acme.atlassian.net", apiBase: "https://api.example.test/ex/confluence/cloud-1" });
      expect(await t.store.connections.wikiToken(found!)).toBe("wiki-token-1");
      expect(await t.store.connections.findWiki(acme, "cloud-2")).toBeUndefined();
      const again = await t.store.connections.addWiki(wiki(acme, "cloud-1", "wiki-token-2"));
      expect(await t.store.connections.wikiToken((await t.store.connections.findWiki(acme, "cloud-1"))!)).toBe("wiki-token-2");
      expect((await t.store.connections.list()).map((c) => c.id)).toEqual([again]);
    });

    it("lists every team's connections by team, kind and id, with hosts and sites but never a token", async () => {
      const acme = await team();
      const other = await team("other");
      const wikiId = await t.store.connections.addWiki(wiki(other, "cloud-9", "secret-wiki-token"));
      await t.store.connections.addGit(other, "secret-git-token-a", ["github.com"]);
      await t.store.connections.addGit(acme, "secret-git-token-b", ["GitLab.com"]);
      const listed = await t.store.connections.list();
      expect(listed).toEqual([
        { id: expect.any(Number), teamId: acme, kind: "git", hosts: ["gitlab.com"], cloudId: null, siteUrl: null, apiBase: null, grantId: null, createdAt: expect.any(String) },
        { id: expect.any(Number), teamId: other, kind: "git", hosts: ["github.com"], cloudId: null, siteUrl: null, apiBase: null, grantId: null, createdAt: expect.any(String) },
        {
          id: wikiId,
          teamId: other,
          kind: "wiki",
          hosts: [],
          cloudId: "cloud-9",
          siteUrl: "https://acme.atlassian.net",
          apiBase: "https://api.example.test/ex/confluence/cloud-9",
          grantId: null,
          createdAt: expect.any(String),
        },
      ]);
      expect(JSON.stringify(listed)).not.toMatch(/secret-(wiki|git)-token/);
    });

    it("removes a pasted connection and its token (false for an unknown id); the token is gone: forbidden", async () => {
      const acme = await team();
      const id = await t.store.connections.addWiki(wiki(acme));
      const connection = (await t.store.connections.findWiki(acme, "cloud-1"))!;
      expect(await t.store.connections.removePasted(id)).toBe(true);
      expect(await t.store.connections.removePasted(id)).toBe(false);
      expect(await t.store.connections.removePasted(9999)).toBe(false);
      expect(await t.store.connections.findWiki(acme, "cloud-1")).toBeUndefined();
      expect(await t.store.connections.list()).toEqual([]);
      await expectLdsError(t.store.connections.wikiToken(connection), "forbidden");
    });
  });

  describe("oauth", () => {
    const t = freshStore(open);
    const team = async (name = "acme") => (await t.store.teams.create(name, "pro")).id;
    const pending = (teamId: number) => ({ provider: "github", teamId, verifier: "v-123", redirectUri: "https://lds.test/cb", startedBy: "admin" });

    it("a state is taken once; an unknown or stale one is undefined", async () => {
      const acme = await team();
      await t.store.oauth.createState("state-1", pending(acme), 600);
      await t.store.oauth.createState("state-stale", pending(acme), -1);
      expect(await t.store.oauth.takeState("state-1")).toEqual(pending(acme));
      expect(await t.store.oauth.takeState("state-1")).toBeUndefined();
      expect(await t.store.oauth.takeState("state-unknown")).toBeUndefined();
      expect(await t.store.oauth.takeState("state-stale")).toBeUndefined();
    });

    it("a state taken by several callbacks at once goes to exactly one of them", async () => {
      const acme = await team();
      const callers = [1, 2, 3, 4, 5, 6];
      // Unknown states taken at once first: an engine with a pool of connections has one open per caller, so that
      // the takers below really run side by side.
      expect(await Promise.all(callers.map((n) => t.store.oauth.takeState(`unknown-${n}`)))).toEqual(callers.map(() => undefined));
      await t.store.oauth.createState("state-1", pending(acme), 600);
      const taken = await Promise.all(callers.map(() => t.store.oauth.takeState("state-1")));
      expect(taken.filter((state) => state !== undefined)).toEqual([pending(acme)]);
    });

    it("a git grant keeps its tokens sealed, makes the team's git connection (replacing a pasted one) and is listed without tokens", async () => {
      const acme = await team();
      await t.store.connections.addGit(acme, "pasted-token", ["github.com"]);
      const id = await t.store.oauth.saveGrant({
        teamId: acme,
        provider: "github",
        account: "octo",
        scopes: "repo",
        tokens: { accessToken: "access-secret-1", refreshToken: "refresh-secret-1", expiresAt: "2030-01-01T00:00:00.000Z" },
        target: { kind: "git", hosts: ["GitHub.com"] },
      });
      expect(await t.store.connections.gitToken(acme, "github.com", "github.com")).toEqual({ token: "access-secret-1", otherHosts: ["github.com"], grantId: id });
      const connections = await t.store.connections.list();
      expect(connections).toEqual([expect.objectContaining({ teamId: acme, kind: "git", hosts: ["github.com"], grantId: id })]);
      // An OAuth connection goes with its grant, not as a pasted one.
      expect(await t.store.connections.removePasted(connections[0]!.id)).toBe(false);
      const grant = {
        id,
        teamId: acme,
        provider: "github",
        account: "octo",
        scopes: "repo",
        expiresAt: "2030-01-01T00:00:00.000Z",
        state: "active",
        problem: null,
        createdAt: expect.any(String),
        hosts: ["github.com"],
        sites: [],
      };
      expect(await t.store.oauth.list()).toEqual([grant]);
      expect(await t.store.oauth.find(id)).toEqual(grant);
      expect(await t.store.oauth.find(id + 100)).toBeUndefined();
      expect(JSON.stringify([await t.store.oauth.list(), connections])).not.toMatch(/(access|refresh)-secret/);
      expect(await t.store.oauth.tokens(id)).toEqual({ accessToken: "access-secret-1", refreshToken: "refresh-secret-1", expiresAt: "2030-01-01T00:00:00.000Z", state: "active", provider: "github" });
    });

    it("a wiki grant makes one connection per site; its token is the grant's", async () => {
      const acme = await team();
      const sites = [1, 2].map((n) => ({ cloudId: `cloud-${n}`, siteUrl: `https://Site${n}.example.test/`, apiBase: `https://api.example.test/${n}` }));
      const id = await t.store.oauth.saveGrant({ teamId: acme, provider: "atlassian", account: "me", scopes: "read", tokens: { accessToken: "wiki-access" }, target: { kind: "wiki", sites } });
      const found = await t.store.connections.findWiki(acme, "cloud-2");
      expect(found).toEqual({ id: expect.any(Number), teamId: acme, cloudId: "cloud-2", siteUrl: "https://site2.example.test", apiBase: "https://api.example.test/2", grantId: id });
      expect(await t.store.connections.wikiToken(found!)).toBe("wiki-access");
      expect((await t.store.oauth.find(id))!.sites).toEqual([
        { cloudId: "cloud-1", siteUrl: "https://site1.example.test" },
        { cloudId: "cloud-2", siteUrl: "https://site2.example.test" },
      ]);
      expect(await t.store.oauth.tokens(id)).toEqual({ accessToken: "wiki-access", refreshToken: undefined, expiresAt: undefined, state: "active", provider: "atlassian" });
    });

    it("a grant whose every connection is replaced (by a new grant or a pasted token) goes with its tokens", async () => {
      const acme = await team();
      const grant = (accessToken: string) => ({ teamId: acme, provider: "github", account: "octo", scopes: "repo", tokens: { accessToken }, target: { kind: "git" as const, hosts: ["github.com"] } });
      const first = await t.store.oauth.saveGrant(grant("first"));
      const second = await t.store.oauth.saveGrant(grant("second"));
      expect(await t.store.oauth.find(first)).toBeUndefined();
      expect(await t.store.oauth.tokens(first)).toBeUndefined();
      expect((await t.store.oauth.list()).map((g) => g.id)).toEqual([second]);
      await t.store.connections.addGit(acme, "pasted", ["github.com"]);
      expect(await t.store.oauth.list()).toEqual([]);
      expect(await t.store.connections.gitToken(acme, "github.com", "github.com")).toEqual({ token: "pasted", otherHosts: ["github.com"] });
    });

    it("git grants saved at once for one team leave one grant and its one connection", async () => {
      const acme = await team();
      const ids = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          t.store.oauth.saveGrant({ teamId: acme, provider: "github", account: `octo-${n}`, scopes: "repo", tokens: { accessToken: `access-${n}` }, target: { kind: "git", hosts: ["github.com"] } }),
        ),
      );
      const grants = await t.store.oauth.list();
      expect(grants).toHaveLength(1);
      expect(ids).toContain(grants[0]!.id);
      expect(await t.store.connections.list()).toEqual([expect.objectContaining({ kind: "git", grantId: grants[0]!.id })]);
      expect(await t.store.connections.gitToken(acme, "github.com", "github.com")).toEqual({ token: `access-${ids.indexOf(grants[0]!.id) + 1}`, otherHosts: ["github.com"], grantId: grants[0]!.id });
    });

    it("updates tokens (the refresh token kept unless a new one comes), marks a grant revoked until refreshed, and removes it with its connections", async () => {
      const acme = await team();
      const id = await t.store.oauth.saveGrant({
        teamId: acme,
        provider: "github",
        account: "octo",
        scopes: "repo",
        tokens: { accessToken: "a1", refreshToken: "r1" },
        target: { kind: "git", hosts: ["github.com"] },
      });
      await t.store.oauth.markRevoked(id, "refresh refused: bad_refresh_token");
      expect(await t.store.oauth.find(id)).toMatchObject({ state: "revoked", problem: "refresh refused: bad_refresh_token" });
      expect(await t.store.oauth.tokens(id)).toMatchObject({ state: "revoked" });
      await t.store.oauth.updateTokens(id, { accessToken: "a2", expiresAt: "2031-01-01T00:00:00.000Z" });
      expect(await t.store.oauth.tokens(id)).toEqual({ accessToken: "a2", refreshToken: "r1", expiresAt: "2031-01-01T00:00:00.000Z", state: "active", provider: "github" });
      expect(await t.store.oauth.find(id)).toMatchObject({ state: "active", problem: null, expiresAt: "2031-01-01T00:00:00.000Z" });
      await t.store.oauth.updateTokens(id, { accessToken: "a3", refreshToken: "r3" });
      expect(await t.store.oauth.tokens(id)).toMatchObject({ accessToken: "a3", refreshToken: "r3", expiresAt: undefined });
      await t.store.oauth.remove(id);
      expect(await t.store.oauth.find(id)).toBeUndefined();
      expect(await t.store.oauth.tokens(id)).toBeUndefined();
      expect(await t.store.connections.list()).toEqual([]);
      expect(await t.store.connections.gitToken(acme, "github.com", "github.com")).toEqual({ token: undefined, otherHosts: null });
    });

    const refreshable = async () =>
      t.store.oauth.saveGrant({
        teamId: await team(),
        provider: "gitlab",
        account: "me",
        scopes: "api",
        tokens: { accessToken: "a1", refreshToken: "r1", expiresAt: "2030-01-01T00:00:00.000Z" },
        target: { kind: "git", hosts: ["gitlab.com"] },
      });

    it("refreshes a grant's tokens once when several callers ask at once: the others wait, then find the new tokens", async () => {
      const id = await refreshable();
      let providerCalls = 0;
      const refresh = async (current: GrantTokens): Promise<TokenRefresh> => {
        if (current.accessToken !== "a1") return "current";
        providerCalls++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { tokens: { accessToken: "a2", refreshToken: "r2" } };
      };
      const after = await Promise.all([1, 2, 3, 4].map(() => t.store.oauth.refreshTokens(id, refresh)));
      expect(providerCalls).toBe(1);
      for (const tokens of after) expect(tokens).toEqual({ accessToken: "a2", refreshToken: "r2", expiresAt: undefined, state: "active", provider: "gitlab" });
      expect(await t.store.oauth.tokens(id)).toEqual(after[0]);
    });

    it("a refusal marks the grant revoked; a failed refresh changes nothing and lets the next one run; a grant gone answers undefined", async () => {
      const id = await refreshable();
      await expect(t.store.oauth.refreshTokens(id, async () => Promise.reject(new Error("provider unreachable")))).rejects.toThrow("provider unreachable");
      expect(await t.store.oauth.tokens(id)).toMatchObject({ accessToken: "a1", refreshToken: "r1", state: "active" });
      expect(await t.store.oauth.refreshTokens(id, async () => ({ revoked: "invalid_grant" }))).toMatchObject({ accessToken: "a1", state: "revoked" });
      expect(await t.store.oauth.find(id)).toMatchObject({ state: "revoked", problem: "invalid_grant" });
      expect(await t.store.oauth.refreshTokens(id + 1000, async () => ({ tokens: { accessToken: "x" } }))).toBeUndefined();
    });

    it("a grant removed while its refresh waits on the provider keeps no tokens", async () => {
      const id = await refreshable();
      let removal: Promise<void> | undefined;
      await t.store.oauth.refreshTokens(id, async () => {
        // Not awaited here: an engine that holds the grant makes the removal wait for this refresh.
        removal = t.store.oauth.remove(id);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { tokens: { accessToken: "a2", refreshToken: "r2" } };
      });
      await removal;
      expect(await t.store.oauth.tokens(id)).toBeUndefined();
      expect(await t.store.settings.hasSecret(`oauth:${id}:access`)).toBe(false);
      expect(await t.store.settings.hasSecret(`oauth:${id}:refresh`)).toBe(false);
    });

    it("lists grants by team then provider", async () => {
      const acme = await team();
      const zeta = await team("zeta");
      const save = (teamId: number, provider: string) =>
        t.store.oauth.saveGrant({
          teamId,
          provider,
          account: "x",
          scopes: "s",
          tokens: { accessToken: "t" },
          target: provider === "github" ? { kind: "git", hosts: ["github.com"] } : { kind: "wiki", sites: [{ cloudId: `c-${teamId}`, siteUrl: "https://s.test", apiBase: "https://a.test" }] },
        });
      await save(zeta, "github");
      await save(acme, "github");
      await save(acme, "atlassian");
      expect((await t.store.oauth.list()).map((g) => [g.teamId, g.provider])).toEqual([
        [acme, "atlassian"],
        [acme, "github"],
        [zeta, "github"],
      ]);
    });
  });
}

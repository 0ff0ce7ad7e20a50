import type { GrantTarget, OAuthTokens } from "../store/records.js";
import { bearer, form, json, providerRequest } from "./http.js";
import type { ProviderConfig } from "./provider-config.js";

export type ProviderKind = "github" | "gitlab" | "atlassian";

/** Tokens as a token endpoint answers them, with the scopes granted. */
export type GrantedTokens = OAuthTokens & { scopes: string };

/** Something a connection can index: a repository (its clone URL) or a wiki space (with its site's cloud id). */
export interface Browsable {
  name: string;
  url?: string;
  cloudId?: string;
  spaceKey?: string;
  private?: boolean;
}

/**
 * One provider's OAuth 2.0 wire format: the authorize redirect's parameters, the token endpoint's request and
 * answer, who the token belongs to and what it may reach, refresh, and revocation where the provider offers it.
 */
export interface OAuthProvider {
  kind: ProviderKind;
  name: string;
  connects: "git" | "wiki";
  defaults: ProviderConfig;
  authorizeUrl(config: ProviderConfig, request: { state: string; challenge: string; redirectUri: string }): string;
  exchange(config: ProviderConfig, clientSecret: string, request: { code: string; verifier: string; redirectUri: string }): Promise<GrantedTokens>;
  refresh(config: ProviderConfig, clientSecret: string, refreshToken: string): Promise<GrantedTokens>;
  identify(config: ProviderConfig, accessToken: string): Promise<{ account: string; target: GrantTarget }>;
  browse(config: ProviderConfig, accessToken: string, target: { sites: Array<{ cloudId: string }> }): Promise<Browsable[]>;
  /** Revoke the grant at the provider; undefined where the provider has no such endpoint. */
  revoke?(config: ProviderConfig, clientSecret: string, tokens: OAuthTokens): Promise<void>;
}

const expiresAt = (seconds: unknown) => (typeof seconds === "number" && seconds > 0 ? new Date(Date.now() + seconds * 1000).toISOString() : undefined);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
function tokensOf(body: any, scopesAsked: string): GrantedTokens {
  if (typeof body?.access_token !== "string" || !body.access_token) throw new Error("the token endpoint answered without an access_token");
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : undefined,
    expiresAt: expiresAt(body.expires_in),
    scopes: typeof body.scope === "string" ? body.scope.replace(/,/g, " ") : scopesAsked,
  };
}

function authorize(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

const pkce = (challenge: string) => ({ code_challenge: challenge, code_challenge_method: "S256" });

/** GitHub's OAuth web flow (github.com/login/oauth/…, api.github.com); form-encoded token requests. */
const github: OAuthProvider = {
  kind: "github",
  name: "GitHub",
  connects: "git",
  defaults: {
    clientId: "",
    authorizeUrl: "https://github.com/login/oauth/authorize",
    tokenUrl: "https://github.com/login/oauth/access_token",
    apiBase: "https://api.github.com",
    scopes: "repo read:user",
    gitHosts: ["github.com"],
  },
  authorizeUrl: (c, r) => authorize(c.authorizeUrl, { client_id: c.clientId, redirect_uri: r.redirectUri, scope: c.scopes, state: r.state, allow_signup: "false", ...pkce(r.challenge) }),
  exchange: async (c, secret, r) =>
    tokensOf(await providerRequest("GitHub", c.tokenUrl, form({ client_id: c.clientId, client_secret: secret, code: r.code, redirect_uri: r.redirectUri, code_verifier: r.verifier })), c.scopes),
  refresh: async (c, secret, refreshToken) =>
    tokensOf(await providerRequest("GitHub", c.tokenUrl, form({ client_id: c.clientId, client_secret: secret, grant_type: "refresh_token", refresh_token: refreshToken })), c.scopes),
  async identify(c, token) {
    const user = await providerRequest("GitHub", `${c.apiBase}/user`, bearer(token));
    return { account: String(user.login ?? user.id), target: { kind: "git", hosts: c.gitHosts } };
  },
  async browse(c, token) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
    const repos = (await providerRequest("GitHub", `${c.apiBase}/user/repos?per_page=100&sort=updated`, bearer(token))) as any[];
    return repos.map((r) => ({ name: String(r.full_name), url: String(r.clone_url ?? r.html_url), private: Boolean(r.private) }));
  },
  async revoke(c, secret, tokens) {
    // DELETE /applications/{client_id}/grant with the app's basic auth removes the authorization and its tokens.
    await providerRequest("GitHub", `${c.apiBase}/applications/${encodeURIComponent(c.clientId)}/grant`, {
      method: "DELETE",
      headers: { authorization: `Basic ${Buffer.from(`${c.clientId}:${secret}`).toString("base64")}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ access_token: tokens.accessToken }),
    });
  },
};

/** GitLab's OAuth 2 (also self-hosted: set the three URLs to the instance's /oauth/authorize, /oauth/token and /api/v4). */
const gitlab: OAuthProvider = {
  kind: "gitlab",
  name: "GitLab",
  connects: "git",
  defaults: {
    clientId: "",
    authorizeUrl: "https://gitlab.com/oauth/authorize",
    tokenUrl: "https://gitlab.com/oauth/token",
    apiBase: "https://gitlab.com/api/v4",
    scopes: "read_user read_repository read_api",
    gitHosts: ["gitlab.com"],
  },
  authorizeUrl: (c, r) => authorize(c.authorizeUrl, { client_id: c.clientId, redirect_uri: r.redirectUri, response_type: "code", scope: c.scopes, state: r.state, ...pkce(r.challenge) }),
  exchange: async (c, secret, r) =>
    tokensOf(
      await providerRequest("GitLab", c.tokenUrl, form({ grant_type: "authorization_code", client_id: c.clientId, client_secret: secret, code: r.code, redirect_uri: r.redirectUri, code_verifier: r.verifier })),
      c.scopes,
    ),
  refresh: async (c, secret, refreshToken) =>
    tokensOf(await providerRequest("GitLab", c.tokenUrl, form({ grant_type: "refresh_token", client_id: c.clientId, client_secret: secret, refresh_token: refreshToken })), c.scopes),
  async identify(c, token) {
    const user = await providerRequest("GitLab", `${c.apiBase}/user`, bearer(token));
    return { account: String(user.username ?? user.id), target: { kind: "git", hosts: c.gitHosts } };
  },
  async browse(c, token) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
    const projects = (await providerRequest("GitLab", `${c.apiBase}/projects?membership=true&per_page=100&order_by=last_activity_at`, bearer(token))) as any[];
    return projects.map((p) => ({ name: String(p.path_with_namespace), url: String(p.http_url_to_repo), private: p.visibility !== "public" }));
  },
  async revoke(c, secret, tokens) {
    await providerRequest("GitLab", c.tokenUrl.replace(/\/token$/, "/revoke"), form({ client_id: c.clientId, client_secret: secret, token: tokens.accessToken }));
  },
};

/**
 * Atlassian's OAuth 2.0 (3LO) for Confluence Cloud: `audience=api.atlassian.com`, `offline_access` for a refresh
 * token (rotating: each refresh answers a new one), JSON token requests, and the accessible-resources call that
 * names the sites (cloud ids) the grant reaches. Atlassian offers no revocation endpoint for 3LO apps.
 */
const atlassian: OAuthProvider = {
  kind: "atlassian",
  name: "Atlassian (Confluence)",
  connects: "wiki",
  defaults: {
    clientId: "",
    authorizeUrl: "https://auth.atlassian.com/authorize",
    tokenUrl: "https://auth.atlassian.com/oauth/token",
    apiBase: "https://api.atlassian.com",
    scopes: "read:confluence-space.summary read:confluence-content.all read:space:confluence read:page:confluence offline_access",
    gitHosts: [],
  },
  authorizeUrl: (c, r) =>
    authorize(c.authorizeUrl, {
      audience: "api.atlassian.com",
      client_id: c.clientId,
      scope: c.scopes,
      redirect_uri: r.redirectUri,
      state: r.state,
      response_type: "code",
      prompt: "consent",
      ...pkce(r.challenge),
    }),
  exchange: async (c, secret, r) =>
    tokensOf(
      await providerRequest(
        "Atlassian",
        c.tokenUrl,
        json({ grant_type: "authorization_code", client_id: c.clientId, client_secret: secret, code: r.code, redirect_uri: r.redirectUri, code_verifier: r.verifier }),
      ),
      c.scopes,
    ),
  refresh: async (c, secret, refreshToken) =>
    tokensOf(await providerRequest("Atlassian", c.tokenUrl, json({ grant_type: "refresh_token", client_id: c.clientId, client_secret: secret, refresh_token: refreshToken })), c.scopes),
  async identify(c, token) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
    const resources = (await providerRequest("Atlassian", `${c.apiBase}/oauth/token/accessible-resources`, bearer(token))) as any[];
    const sites = resources
      .filter((r) => typeof r?.id === "string" && /^[A-Za-z0-9-]{1,64}$/.test(r.id) && typeof r?.url === "string" && /^https?:\/\//.test(r.url))
      .map((r) => ({ cloudId: r.id as string, siteUrl: r.url as string, apiBase: `${c.apiBase}/ex/confluence/${r.id}` }));
    if (sites.length === 0) throw new Error("the grant reaches no Confluence site (accessible-resources is empty)");
    let account = sites.map((s) => new URL(s.siteUrl).host).join(", ");
    try {
      const me = await providerRequest("Atlassian", `${c.apiBase}/me`, bearer(token));
      if (typeof me?.email === "string" || typeof me?.name === "string") account = String(me.email ?? me.name);
    } catch {
      // /me needs the read:me scope, which an operator may not have asked for: the sites name the grant then.
    }
    return { account, target: { kind: "wiki", sites } };
  },
  async browse(c, token, target) {
    const spaces: Browsable[] = [];
    for (const site of target.sites) {
      const listing = await providerRequest("Atlassian", `${c.apiBase}/ex/confluence/${site.cloudId}/wiki/api/v2/spaces?limit=100`, bearer(token));
      for (const s of listing?.results ?? []) spaces.push({ name: `${s.name} (${s.key})`, cloudId: site.cloudId, spaceKey: String(s.key) });
    }
    return spaces;
  },
};

export const PROVIDERS: OAuthProvider[] = [github, gitlab, atlassian];

export function providerOf(kind: ProviderKind): OAuthProvider {
  return PROVIDERS.find((p) => p.kind === kind)!;
}

export function isProviderKind(value: string): value is ProviderKind {
  return PROVIDERS.some((p) => p.kind === value);
}

import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Stand-ins for the OAuth providers LDS connects to (the real services cannot run here), speaking their wire
 * formats: GitHub's web flow (`/github/login/oauth/authorize`, form-encoded `access_token` answering errors with
 * HTTP 200 and `error`, `GET /user`, `GET /user/repos`, `DELETE /applications/{client_id}/grant` with basic auth),
 * GitLab's (`/oauth/authorize`, form-encoded `/oauth/token` with 2-hour tokens and rotating refresh tokens, 400
 * `invalid_grant`, `/oauth/revoke`, `/api/v4/user`, `/api/v4/projects`)
 * and Atlassian's 3LO (`/atlassian/authorize` with `audience`, JSON `/oauth/token` with rotating refresh tokens
 * and 403 `invalid_grant`, `GET /oauth/token/accessible-resources`, and Confluence's API under
 * `/ex/confluence/{cloudId}`, passed on to a Confluence fixture). Each authorize page asks for consent with
 * Authorize and Cancel buttons, as the real ones do; codes are single-use and bound to the PKCE challenge.
 */
export interface OAuthFixtureOptions {
  clientId: string;
  clientSecret: string;
  /** The access token GitHub issues: the git server's token, so that clones with it work. */
  githubAccessToken: string;
  /** Confluence: the fixture's URL and the one token it accepts; and the cloud id and site it is. */
  confluence: { url: string; token: string; cloudId: string; siteUrl: string };
  /** Lifetime of Atlassian access tokens. @default 3600 */
  atlassianTtlSeconds?: number;
}

interface PendingCode {
  provider: "github" | "gitlab" | "atlassian";
  redirectUri: string;
  challenge: string | null;
  scope: string;
  used: boolean;
}

export async function startOAuthFixture(options: OAuthFixtureOptions) {
  const codes = new Map<string, PendingCode>();
  const atlassianAccess = new Map<string, { expiresAt: number }>();
  const atlassianRefresh = new Map<string, { valid: boolean }>();
  const log = { tokenRequests: [] as Array<{ provider: string; grantType: string; ok: boolean }>, apiRequests: [] as Array<{ path: string; authorized: boolean }>, revocations: 0 };
  const githubTokens = new Set<string>();
  /** What GitHub's code exchange and GitLab's code and refresh grants hand out (the git server accepts it). */
  let accessToken = options.githubAccessToken;
  const gitlabRefresh = new Map<string, { valid: boolean }>();

  const sendJson = (res: http.ServerResponse, status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const readBody = (req: http.IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = "";
      req.on("data", (d: Buffer) => (text += d.toString()));
      req.on("end", () => resolve(text));
    });
  const consentPage = (provider: string, params: URLSearchParams) => `<!doctype html><html lang="en"><head><title>Authorize LDS</title></head><body>
<h1>${provider === "atlassian" ? "LDS is requesting access to your Atlassian account" : "Authorize LDS"}</h1>
<form method="post" action="/${provider}/consent">
<input type="hidden" name="query" value="${params.toString().replace(/"/g, "&quot;")}">
<button name="decision" value="allow">${provider === "atlassian" ? "Accept" : "Authorize"}</button>
<button name="decision" value="deny">Cancel</button>
</form></body></html>`;
  const newToken = (prefix: string) => `${prefix}_${randomBytes(16).toString("hex")}`;
  const issueAtlassian = () => {
    const access = newToken("atl");
    const refresh = newToken("atlr");
    atlassianAccess.set(access, { expiresAt: Date.now() + (options.atlassianTtlSeconds ?? 3600) * 1000 });
    atlassianRefresh.set(refresh, { valid: true });
    return {
      access_token: access,
      refresh_token: refresh,
      expires_in: options.atlassianTtlSeconds ?? 3600,
      token_type: "Bearer",
      scope: "read:confluence-content.all read:confluence-space.summary offline_access",
    };
  };
  const challengeOk = (pending: PendingCode, verifier: string | undefined) =>
    pending.challenge === null || (verifier !== undefined && createHash("sha256").update(verifier).digest("base64url") === pending.challenge);

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, "http://x");
    const path = url.pathname;
    const auth = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    // Authorize: validate the client and redirect_uri (never redirect to an unregistered one), then ask for consent.
    const authorize = /^\/(github)\/login\/oauth\/authorize$|^\/(atlassian)\/authorize$|^\/(gitlab)\/oauth\/authorize$/.exec(path);
    if (authorize && req.method === "GET") {
      const provider = (authorize[1] ?? authorize[2] ?? authorize[3])!;
      if (url.searchParams.get("client_id") !== options.clientId) return res.writeHead(404, { "content-type": "text/plain" }).end("Unknown client");
      if (provider === "atlassian" && (url.searchParams.get("audience") !== "api.atlassian.com" || url.searchParams.get("response_type") !== "code")) {
        return res.writeHead(400, { "content-type": "text/plain" }).end("audience=api.atlassian.com and response_type=code are required");
      }
      return res.writeHead(200, { "content-type": "text/html" }).end(consentPage(provider, url.searchParams));
    }
    const consent = /^\/(github|gitlab|atlassian)\/consent$/.exec(path);
    if (consent && req.method === "POST") {
      const form = new URLSearchParams(await readBody(req));
      const query = new URLSearchParams(form.get("query") ?? "");
      const back = new URL(query.get("redirect_uri")!);
      back.searchParams.set("state", query.get("state") ?? "");
      if (form.get("decision") !== "allow") {
        back.searchParams.set("error", "access_denied");
        back.searchParams.set("error_description", consent[1] === "github" ? "The user has denied your application access." : "User did not authorize the request");
      } else {
        const code = randomBytes(10).toString("hex");
        codes.set(code, { provider: consent[1] as PendingCode["provider"], redirectUri: query.get("redirect_uri")!, challenge: query.get("code_challenge"), scope: query.get("scope") ?? "", used: false });
        back.searchParams.set("code", code);
      }
      return res.writeHead(302, { location: back.href }).end();
    }
    if (path === "/github/login/oauth/access_token" && req.method === "POST") {
      const body = new URLSearchParams(await readBody(req));
      const refuse = (error: string, description: string) => {
        log.tokenRequests.push({ provider: "github", grantType: "authorization_code", ok: false });
        // GitHub answers token errors with 200 and an error body.
        sendJson(res, 200, { error, error_description: description, error_uri: "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors" });
      };
      if (body.get("client_id") !== options.clientId || body.get("client_secret") !== options.clientSecret)
        return refuse("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.");
      const pending = codes.get(body.get("code") ?? "");
      if (!pending || pending.used || pending.provider !== "github" || pending.redirectUri !== body.get("redirect_uri") || !challengeOk(pending, body.get("code_verifier") ?? undefined)) {
        return refuse("bad_verification_code", "The code passed is incorrect or expired.");
      }
      pending.used = true;
      githubTokens.add(accessToken);
      log.tokenRequests.push({ provider: "github", grantType: "authorization_code", ok: true });
      return sendJson(res, 200, { access_token: accessToken, token_type: "bearer", scope: "repo,read:user" });
    }
    if (path === "/gitlab/oauth/token" && req.method === "POST") {
      const body = new URLSearchParams(await readBody(req));
      const grantType = body.get("grant_type") ?? "?";
      const refuse = (status: number, error: string, description: string) => {
        log.tokenRequests.push({ provider: "gitlab", grantType, ok: false });
        sendJson(res, status, { error, error_description: description });
      };
      if (body.get("client_id") !== options.clientId || body.get("client_secret") !== options.clientSecret) {
        return refuse(401, "invalid_client", "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.");
      }
      const invalid = "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.";
      if (grantType === "authorization_code") {
        const pending = codes.get(body.get("code") ?? "");
        if (!pending || pending.used || pending.provider !== "gitlab" || pending.redirectUri !== body.get("redirect_uri") || !challengeOk(pending, body.get("code_verifier") ?? undefined))
          return refuse(400, "invalid_grant", invalid);
        pending.used = true;
      } else if (grantType === "refresh_token") {
        const refresh = gitlabRefresh.get(body.get("refresh_token") ?? "");
        if (!refresh?.valid) return refuse(400, "invalid_grant", invalid);
        refresh.valid = false;
      } else return refuse(400, "unsupported_grant_type", "The authorization grant type is not supported by the authorization server.");
      const refreshToken = newToken("glrt");
      gitlabRefresh.set(refreshToken, { valid: true });
      githubTokens.add(accessToken);
      log.tokenRequests.push({ provider: "gitlab", grantType, ok: true });
      // The git server accepts one token, so every GitLab access token is that one; refresh tokens rotate.
      return sendJson(res, 200, {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: 7200,
        refresh_token: refreshToken,
        scope: "read_user read_repository read_api",
        created_at: Math.floor(Date.now() / 1000),
      });
    }
    if (path === "/gitlab/oauth/revoke" && req.method === "POST") {
      const body = new URLSearchParams(await readBody(req));
      if (body.get("client_id") !== options.clientId || body.get("client_secret") !== options.clientSecret) return sendJson(res, 401, { error: "invalid_client" });
      log.revocations++;
      return sendJson(res, 200, {});
    }
    if (path.startsWith("/gitlab/api/v4/")) {
      const authorized = githubTokens.has(auth);
      log.apiRequests.push({ path, authorized });
      if (!authorized) return sendJson(res, 401, { message: "401 Unauthorized" });
      if (path === "/gitlab/api/v4/user") return sendJson(res, 200, { id: 77, username: "lab-dev", name: "Lab Dev", state: "active" });
      if (path === "/gitlab/api/v4/projects")
        return sendJson(res, 200, [{ id: 1, path_with_namespace: "acme/ledgerline", http_url_to_repo: "https://gitlab.example/acme/ledgerline.git", visibility: "private" }]);
      return sendJson(res, 404, { message: "404 Not Found" });
    }
    if (path === "/atlassian/oauth/token" && req.method === "POST") {
      let body: Record<string, string> = {};
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        return sendJson(res, 400, { error: "invalid_request", error_description: "The request body must be JSON." });
      }
      const refuse = (status: number, error: string, description: string) => {
        log.tokenRequests.push({ provider: "atlassian", grantType: body.grant_type ?? "?", ok: false });
        sendJson(res, status, { error, error_description: description });
      };
      if (body.client_id !== options.clientId || body.client_secret !== options.clientSecret) return refuse(401, "access_denied", "Unauthorized");
      if (body.grant_type === "authorization_code") {
        const pending = codes.get(body.code ?? "");
        if (!pending || pending.used || pending.provider !== "atlassian" || pending.redirectUri !== body.redirect_uri || !challengeOk(pending, body.code_verifier)) {
          return refuse(403, "invalid_grant", "Invalid authorization code");
        }
        pending.used = true;
      } else if (body.grant_type === "refresh_token") {
        const refresh = atlassianRefresh.get(body.refresh_token ?? "");
        if (!refresh?.valid) return refuse(403, "invalid_grant", "Unknown or invalid refresh token.");
        refresh.valid = false; // rotation: a refresh token works once
      } else return refuse(400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
      log.tokenRequests.push({ provider: "atlassian", grantType: body.grant_type, ok: true });
      return sendJson(res, 200, issueAtlassian());
    }
    // The APIs: every call is logged with whether it carried a valid token.
    if (path.startsWith("/github/api/")) {
      const authorized = githubTokens.has(auth);
      log.apiRequests.push({ path, authorized });
      const grant = /^\/github\/api\/applications\/([^/]+)\/grant$/.exec(path);
      if (grant && req.method === "DELETE") {
        const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
        const body = JSON.parse((await readBody(req)) || "{}");
        if (basic !== `${options.clientId}:${options.clientSecret}` || grant[1] !== options.clientId) return sendJson(res, 404, { message: "Not Found" });
        githubTokens.delete(body.access_token);
        log.revocations++;
        return res.writeHead(204).end();
      }
      if (!authorized) return sendJson(res, 401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" });
      if (path === "/github/api/user") return sendJson(res, 200, { login: "octo-dev", id: 4242, type: "User" });
      if (path === "/github/api/user/repos") return sendJson(res, 200, [{ full_name: "acme/ledgerline", private: true, clone_url: "https://github.com/acme/ledgerline.git" }]);
      return sendJson(res, 404, { message: "Not Found" });
    }
    if (path.startsWith("/atlassian/api/")) {
      const token = atlassianAccess.get(auth);
      const authorized = token !== undefined && token.expiresAt > Date.now();
      log.apiRequests.push({ path, authorized });
      if (!authorized) return sendJson(res, 401, { code: 401, message: "Unauthorized" });
      if (path === "/atlassian/api/oauth/token/accessible-resources") {
        return sendJson(res, 200, [
          {
            id: options.confluence.cloudId,
            url: options.confluence.siteUrl,
            name: "acme",
            scopes: ["read:confluence-content.all"],
            avatarUrl: "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/flag.png",
          },
        ]);
      }
      if (path === "/atlassian/api/me") return sendJson(res, 403, { code: 403, message: "scope does not match" });
      const confluence = new RegExp(`^/atlassian/api/ex/confluence/${options.confluence.cloudId}(/wiki/.*)$`).exec(path);
      if (confluence) {
        const answer = await fetch(`${options.confluence.url}${confluence[1]}${url.search}`, { headers: { authorization: `Bearer ${options.confluence.token}` } });
        return sendJson(res, answer.status, await answer.json());
      }
      return sendJson(res, 404, { code: 404, message: "Not Found" });
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("No route");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    log,
    /** The provider settings LDS needs to use this fixture instead of the public provider. */
    github: { authorizeUrl: `${base}/github/login/oauth/authorize`, tokenUrl: `${base}/github/login/oauth/access_token`, apiBase: `${base}/github/api` },
    gitlab: { authorizeUrl: `${base}/gitlab/oauth/authorize`, tokenUrl: `${base}/gitlab/oauth/token`, apiBase: `${base}/gitlab/api/v4` },
    atlassian: { authorizeUrl: `${base}/atlassian/authorize`, tokenUrl: `${base}/atlassian/oauth/token`, apiBase: `${base}/atlassian/api` },
    /** From now on, grants and refreshes hand out `token` (a provider that replaced a token before its expiry). */
    issueAccessToken(token: string) {
      accessToken = token;
    },
    /** Every Atlassian access token stops working now (as at expiry); refresh tokens still work. */
    expireAtlassianAccess() {
      for (const t of atlassianAccess.values()) t.expiresAt = 0;
    },
    /** The user removed the app: every Atlassian token, access and refresh, stops working. */
    revokeAtlassian() {
      for (const t of atlassianAccess.values()) t.expiresAt = 0;
      for (const r of atlassianRefresh.values()) r.valid = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

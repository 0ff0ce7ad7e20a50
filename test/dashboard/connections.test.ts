import path from "node:path";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, launchBrowser, screenshot, watchedContext, type WatchedContext } from "../helpers/browser.js";
import { runCli } from "../helpers/cli.js";
import { startConfluenceServer } from "../helpers/confluence-server.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer, type TestRepo } from "../helpers/git-server.js";
import { startOAuthFixture } from "../helpers/oauth-provider.js";
import { ADMIN, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

const GIT_TOKEN = "ghp_connected_token_0042";
const WIKI_TOKEN = "confluence-upstream-token";
const CLIENT = { clientId: "lds-test-app", clientSecret: "lds-test-app-secret-1234" };
const SITE = "https://acme.example.net";
const pages = ["Billing", "Search", "Auth"].map((title, i) => ({
  id: String(2001 + i),
  title,
  storage: `<h2>Overview of ${title}</h2><p>How the ${title.toLowerCase()} service works, step by step, for operators.</p><ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[${title.toLowerCase()} --status]]></ac:plain-text-body></ac:structured-macro>`,
}));

let browser: Browser;
let server: TestServer;
let gitA: GitServer;
let gitB: GitServer;
let privateA: TestRepo;
let privateB: TestRepo;
let confluence: Awaited<ReturnType<typeof startConfluenceServer>>;
let oauth: Awaited<ReturnType<typeof startOAuthFixture>>;
let dataDir: string;
let key: string;
let watched: WatchedContext;
let page: Page;

const call = async (route: string, body?: unknown) => {
  const response = await fetch(server.url + route, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as any };
};

beforeAll(async () => {
  gitA = await startGitServer(GIT_TOKEN);
  gitB = await startGitServer("another-hosts-token");
  privateA = await gitA.createRepo("private", "acme", "ledgerline", fixtureDocs("ledgerline"));
  privateB = await gitB.createRepo("private", "acme", "quarry", fixtureDocs("quarry"));
  confluence = await startConfluenceServer({ token: WIKI_TOKEN, spaceKey: "OPS", spaceId: "77001", pages });
  oauth = await startOAuthFixture({ ...CLIENT, githubAccessToken: GIT_TOKEN, confluence: { url: confluence.url, token: WIKI_TOKEN, cloudId: "cloud-acme-1", siteUrl: SITE } });
  dataDir = tempDirForFile("lds-connections-");
  const init = await runCli("lds", ["init", "--team", "docs", "--email", "owner@docs.test", "--plan", "enterprise", "--json", "--data-dir", dataDir]);
  expect(init.exitCode, init.stderr).toBe(0);
  key = JSON.parse(init.stdout).key;
  expect((await runCli("lds", ["teams", "add-project", "docs", "proj-ops", "--data-dir", dataDir])).exitCode).toBe(0);
  const hosts = [new URL(gitA.base).host, new URL(gitB.base).host];
  server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: hosts.join(","), LDS_GIT_DEFAULT_HOST: hosts[0]! });
  browser = await launchBrowser();
  watched = await watchedContext(browser);
  page = await watched.newPage();
  await page.goto(`${server.url}/dashboard/connections`);
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Connections", level: 1 }).waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await Promise.all([gitA?.close(), gitB?.close(), confluence?.close(), oauth?.close()]);
});

async function configure(name: string, urls: { authorizeUrl: string; tokenUrl: string; apiBase: string }, gitHost?: string) {
  const form = page.getByRole("form", { name: `${name} settings` });
  await form.getByLabel("Client id").fill(CLIENT.clientId);
  await form.getByLabel("Client secret").fill(CLIENT.clientSecret);
  await form.getByText(/^Addresses/).click();
  await form.getByLabel("Authorize URL").fill(urls.authorizeUrl);
  await form.getByLabel("Token URL").fill(urls.tokenUrl);
  await form.getByLabel("API base URL").fill(urls.apiBase);
  if (gitHost) await form.getByLabel("Git hosts the token may clone from").fill(gitHost);
  await form.getByRole("button", { name: `Save ${name}` }).click();
  await form.getByText("Saved.").waitFor();
}

describe("connected accounts (OAuth) in the dashboard, against providers that speak the real wire formats", () => {
  it("sets up the providers: the secret is write-only, the callback URL is shown", async () => {
    // The page shows "…" until the providers have loaded: wait for the answer, not for the element.
    await expect.poll(() => page.getByTestId("redirect-uri").textContent()).toBe(`${server.url}/api/oauth/callback`);
    await configure("GitHub", oauth.github, new URL(gitA.base).host);
    await configure("Atlassian (Confluence)", oauth.atlassian);
    await page.reload();
    await page.getByRole("button", { name: "Connect GitHub" }).waitFor();
    expect(await page.content()).not.toContain(CLIENT.clientSecret);
    expect(await accessibilityViolations(page)).toEqual([]);
    watched.assertNothingUnexpected();
  });

  it("a denied consent connects nothing and says so; approving connects the account, valid for its host only", async () => {
    await page.getByRole("button", { name: "Connect GitHub" }).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    await watched.expectShown(/GitHub did not authorize LDS \(consent was denied\)/);
    // The callback's redirect carries codes only, each from a fixed list; the page words them.
    expect(new URL(page.url()).search).toBe("?error=oauth_failed&reason=denied&provider=github");
    expect(await page.getByTestId("connections").count()).toBe(0);

    await page.getByRole("button", { name: "Connect GitHub" }).click();
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.getByTestId("connected").waitFor();
    // The account named is the one the server recorded: the address holds only the id of that record.
    expect(await page.getByTestId("connected").textContent()).toBe("Connected octo-dev (GitHub) for team docs.");
    expect(new URL(page.url()).search).toMatch(/^\?connected=[A-Za-z0-9_-]{22}$/);
    const row = page.getByTestId("connections").getByRole("row", { name: /octo-dev/ });
    expect(await row.textContent()).toContain(new URL(gitA.base).host);
    expect(await row.textContent()).not.toContain(new URL(gitB.base).host);
    await row.getByRole("button", { name: "Browse octo-dev" }).click();
    await page.getByTestId("browse").getByText("acme/ledgerline").waitFor();
    await screenshot(page, "connections");
    watched.assertNothingUnexpected();
  });

  it("refuses a callback with a wrong state and a code used twice; nothing is connected by them", async () => {
    await page.goto(`${server.url}/api/oauth/callback?code=whatever&state=not-a-state-we-issued`);
    await watched.expectShown(/unknown, was already used, or is older than 10 minutes/);
    expect(oauth.log.tokenRequests.filter((r) => r.provider === "github")).toHaveLength(1);

    // A flow whose redirect is replayed: the state is used up the first time, and a new state with the old code
    // is refused by the provider (codes are single-use).
    const { authorizeUrl } = await (await page.request.post(`${server.url}/api/oauth/github/start`, { data: { team: "docs" }, headers: { origin: server.url } })).json();
    const query = new URL(authorizeUrl).searchParams;
    const consent = await fetch(`${oauth.base}/github/consent`, { method: "POST", body: new URLSearchParams({ query: query.toString(), decision: "allow" }), redirect: "manual" });
    const back = consent.headers.get("location")!;
    await page.goto(back);
    await page.getByTestId("connected").waitFor();
    await page.goto(back);
    await watched.expectShown(/unknown, was already used/);
    const second = await (await page.request.post(`${server.url}/api/oauth/github/start`, { data: { team: "docs" }, headers: { origin: server.url } })).json();
    const replay = new URL(back);
    replay.searchParams.set("state", new URL(second.authorizeUrl).searchParams.get("state")!);
    await page.goto(replay.href);
    const refusal = await watched.expectShown(/GitHub refused the authorization code; nothing was connected/);
    expect(refusal).toMatch(/already used or has expired/);
    // The provider's own answer is for the operator's log, not for the address.
    expect(refusal).not.toContain("bad_verification_code");
    expect(new URL(page.url()).search).toBe("?error=oauth_failed&reason=code_rejected&provider=github");
    expect(server.output()).toContain("bad_verification_code");
    await expect.poll(() => page.getByTestId("connections").locator("tbody tr").count()).toBe(1);
    watched.assertNothingUnexpected();
  });

  it("an address anyone can write puts none of its text on a dashboard page, and announces no connection (issue 39)", async () => {
    const lure = "Your session expired. Re-enter your password at https://evil.example/login";
    const forged: Array<[string, RegExp]> = [
      // The 0.7.10 redirect's own shape, with the attacker's words.
      [`?error=x&message=${encodeURIComponent(lure)}&hint=${encodeURIComponent(lure)}`, /^The connection did not complete; nothing was connected\.Connect again from this page\.$/],
      // Every parameter the page reads, filled with text: none of it is shown.
      [`?error=${encodeURIComponent(lure)}&reason=${encodeURIComponent(lure)}&provider=${encodeURIComponent(lure)}`, /^The connection did not complete/],
      [`?error=oauth_failed&reason=${encodeURIComponent(lure)}&provider=${encodeURIComponent(lure)}`, /^The provider did not complete the authorization; nothing was connected\./],
      // A known code is worded by the page whatever else the address holds.
      [`?error=oauth_failed&reason=denied&provider=github&message=${encodeURIComponent(lure)}`, /^GitHub did not authorize LDS \(consent was denied\); nothing was connected\./],
    ];
    for (const [search, shown] of forged) {
      await page.goto(`${server.url}/dashboard/connections${search}`);
      await expect.poll(() => page.getByTestId("redirect-uri").textContent()).toContain("/api/oauth/callback");
      expect(await watched.expectShown(shown)).not.toMatch(/evil|password/);
      expect(await page.locator("body").innerText()).not.toMatch(/evil|password/);
    }

    // A fake success names an account the server never connected, or one it did: neither is announced.
    for (const search of ["?connected=github&account=evil-admin", "?connected=github&account=octo-dev", `?connected=${"A".repeat(22)}&account=evil-admin`]) {
      await page.goto(`${server.url}/dashboard/connections${search}`);
      await page
        .getByTestId("connections")
        .getByRole("row", { name: /octo-dev/ })
        .waitFor();
      // Until the server has answered whether it knows the id (it does not), the announcement is busy.
      await page.locator('[data-testid="connect-outcome"][aria-busy="false"]').waitFor({ state: "attached" });
      expect(await page.getByTestId("connected").count()).toBe(0);
      expect(await page.locator("body").innerText()).not.toMatch(/evil-admin|Connected octo-dev/);
    }

    // The other pages that read the address: the not-found page does not repeat the path, and the restore page
    // preselects an archive only when it is a listed one.
    await page.goto(`${server.url}/dashboard/Your-account-is-locked-call-555-0100`);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    expect(await page.locator("body").innerText()).not.toMatch(/locked|555/);
    await page.goto(`${server.url}/dashboard/restore?archive=${encodeURIComponent(lure)}`);
    await page.getByText(/^No archives at /).waitFor();
    expect(await page.getByRole("button", { name: "Check this archive" }).isDisabled()).toBe(true);
    expect(await page.locator("body").innerText()).not.toMatch(/evil|password/);
    watched.assertNothingUnexpected();
  });

  it("clones a private repository with the connected token, and never sends it to a host the connection is not valid for", async () => {
    const ok = await call("/v2/add/repo/hostb", { docsRepoUrl: privateA.url, private: true });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    await eventually(async () => libraryState(dataDir, ok.json.libraryName)?.state === "finalized", 90_000);
    expect(gitA.requests.some((r) => r.authorized)).toBe(true);

    const refused = await call("/v2/add/repo/hostb", { docsRepoUrl: privateB.url, private: true });
    expect(refused.status).toBe(403);
    expect(refused.json.message).toContain(`not valid for ${new URL(gitB.base).host}`);
    expect(gitB.requests).toEqual([]);
  });

  it("connects the wiki account (sites from accessible-resources) and indexes a space; an expired access token is refreshed during the crawl", async () => {
    await page.goto(`${server.url}/dashboard/connections`);
    await page.getByRole("button", { name: "Connect Atlassian (Confluence)" }).click();
    await page.getByRole("button", { name: "Accept" }).click();
    await page.getByTestId("connected").waitFor();
    expect(await page.getByTestId("connections").textContent()).toContain(SITE);

    const submitted = await call("/v2/add/wiki", {
      cloudId: "cloud-acme-1",
      siteUrl: SITE,
      spaceKey: "OPS",
      spaceName: "Operations",
      title: "Ops handbook",
      description: "How we run things",
      projectId: "proj-ops",
    });
    expect(submitted.status, JSON.stringify(submitted.json)).toBe(200);
    const id = submitted.json.libraryName as string;
    await eventually(async () => libraryState(dataDir, id)?.state === "finalized", 60_000);

    // The provider stops honouring the access token LDS holds (LDS still thinks it valid for an hour).
    oauth.expireAtlassianAccess();
    const refreshesBefore = oauth.log.tokenRequests.filter((r) => r.grantType === "refresh_token" && r.ok).length;
    expect((await call("/v1/refresh", { libraryName: id })).status).toBe(200);
    await eventually(async () => oauth.log.tokenRequests.filter((r) => r.grantType === "refresh_token" && r.ok).length === refreshesBefore + 1, 60_000);
    await eventually(async () => libraryState(dataDir, id)?.state === "finalized" && !oauth.log.apiRequests.at(-1)?.path.includes("accessible"), 60_000);
    expect(libraryState(dataDir, id)?.state_reason ?? null).toBeNull();
    // Every Confluence call went to the provider's API host, and the last ones with the refreshed token.
    expect(oauth.log.apiRequests.at(-1)!.authorized).toBe(true);
    watched.assertNothingUnexpected();
  });

  it("a revoked refresh token fails the library with a reason that says to reconnect, and the overview warns", async () => {
    const libraries = await (await page.request.get(`${server.url}/api/libraries`)).json();
    const wikiId = libraries.libraries.find((l: { source: string }) => l.source === "wiki").id as string;
    oauth.revokeAtlassian();
    expect((await call("/v1/refresh", { libraryName: wikiId })).status).toBe(200);
    await eventually(async () => libraryState(dataDir, wikiId)?.state === "failed", 60_000);
    expect(libraryState(dataDir, wikiId)?.state_reason).toMatch(/revoked or has expired .*invalid_grant.*reconnect the wiki account \(Atlassian \(Confluence\)\) in the dashboard's Connections page/);

    // Headless installs see the same from the CLI, beside the running server.
    const listed = await runCli("lds", ["connections", "list", "--json", "--data-dir", dataDir]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const wiki = JSON.parse(listed.stdout).connections.find((c: { kind: string }) => c.kind === "wiki");
    expect(wiki).toMatchObject({ team: "docs", madeBy: "oauth:atlassian", state: "revoked", validFor: [SITE], tokenGoesTo: [`${oauth.atlassian.apiBase}/ex/confluence/cloud-acme-1`] });
    expect(listed.stdout).not.toMatch(/atl_|atlr_|ghp_/);

    await page.goto(`${server.url}/dashboard/`);
    await page.locator('[data-code="connection_revoked"]').waitFor();
    await page.goto(`${server.url}/dashboard/connections`);
    await page.getByTestId("connections").getByText("must reconnect").waitFor();
    watched.assertNothingUnexpected();
  });

  it("disconnects after confirmation, revoking the token at the provider where it offers that", async () => {
    const row = page.getByTestId("connections").getByRole("row", { name: /octo-dev/ });
    await row.getByRole("button", { name: "Disconnect octo-dev" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Disconnect" }).click();
    await page.getByText(/Disconnected octo-dev; GitHub revoked its token/).waitFor();
    expect(oauth.log.revocations).toBe(1);
    await expect
      .poll(() =>
        page
          .getByTestId("connections")
          .getByRole("row", { name: /octo-dev/ })
          .count(),
      )
      .toBe(0);
    // The team's private repository can no longer be fetched with it: its refresh fails, naming the refusal.
    const libraries = await (await page.request.get(`${server.url}/api/libraries`)).json();
    const gitId = libraries.libraries.find((l: { source: string; private: boolean }) => l.source === "git" && l.private).id as string;
    const authorizedBefore = gitA.requests.filter((r) => r.authorized).length;
    expect((await call("/v1/refresh", { libraryName: gitId })).status).toBe(200);
    await eventually(async () => libraryState(dataDir, gitId)?.state === "failed", 60_000);
    expect(libraryState(dataDir, gitId)?.state_reason).toMatch(/repository_auth_failed|repository_not_found/);
    expect(gitA.requests.filter((r) => r.authorized).length).toBe(authorizedBefore);
    watched.assertNothingUnexpected();
  });

  it("a GitLab-style connection (self-hosted URLs) is refreshed before it expires, rotating its refresh token", async () => {
    await configure("GitLab", oauth.gitlab, new URL(gitA.base).host);
    await page.getByRole("button", { name: "Connect GitLab" }).click();
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.getByTestId("connected").waitFor();
    const row = page.getByTestId("connections").getByRole("row", { name: /lab-dev/ });
    expect(await row.textContent()).toMatch(/read_repository/);
    // Two hours later: the access token is about to expire. The next clone refreshes it first.
    const db = new Database(path.join(dataDir, "lds.db"));
    db.prepare("UPDATE oauth_grants SET expires_at = ? WHERE provider = 'gitlab'").run(new Date(Date.now() + 10_000).toISOString());
    db.close();
    const libraries = await (await page.request.get(`${server.url}/api/libraries`)).json();
    const gitId = libraries.libraries.find((l: { source: string; private: boolean }) => l.source === "git" && l.private).id as string;
    expect((await call("/v1/refresh", { libraryName: gitId })).status).toBe(200);
    await eventually(async () => libraryState(dataDir, gitId)?.state === "finalized", 60_000);
    const gitlabGrants = oauth.log.tokenRequests.filter((r) => r.provider === "gitlab" && r.ok).map((r) => r.grantType);
    expect(gitlabGrants).toEqual(["authorization_code", "refresh_token"]);
    const check = new Database(path.join(dataDir, "lds.db"), { readonly: true });
    const expires = check.prepare("SELECT expires_at FROM oauth_grants WHERE provider = 'gitlab'").pluck().get() as string;
    check.close();
    expect(Date.parse(expires) - Date.now()).toBeGreaterThan(3600_000);
    // No token or client secret was ever logged.
    for (const secret of [GIT_TOKEN, CLIENT.clientSecret, "atl_", "atlr_", "glrt_"]) expect(server.output()).not.toContain(secret);
    expect(await accessibilityViolations(page)).toEqual([]);
    watched.assertNothingUnexpected();
  });

  it("a git host's refusal of a connected GitLab token renews it once, and the clone uses the new token", async () => {
    // The provider invalidated the access token before its expiry (a password change, say): the git host now lets
    // in only the token a refresh hands out. The repository changed meanwhile, so the refresh also clones.
    const rotated = `glpat_${"r".repeat(20)}`;
    gitA.setToken(rotated);
    oauth.issueAccessToken(rotated);
    await privateA.commit({ "docs/renewed.md": "# Renewed\n\nA page pushed after the token was renewed, about ledger rotation.\n" });
    const refreshesBefore = oauth.log.tokenRequests.filter((r) => r.provider === "gitlab" && r.ok && r.grantType === "refresh_token").length;
    const refusedBefore = gitA.requests.filter((r) => !r.authorized).length;
    const libraries = await (await page.request.get(`${server.url}/api/libraries`)).json();
    const gitId = libraries.libraries.find((l: { source: string; private: boolean }) => l.source === "git" && l.private).id as string;
    expect((await call("/v1/refresh", { libraryName: gitId })).status).toBe(200);
    const renewedPages = () => {
      const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
      try {
        return db.prepare("SELECT count(*) FROM snippets WHERE library_id = ? AND title LIKE '%Renewed%'").pluck().get(gitId) as number;
      } finally {
        db.close();
      }
    };
    await eventually(async () => renewedPages() > 0 && libraryState(dataDir, gitId)?.state === "finalized", 60_000);
    // The old token was refused once, one refresh followed, and the clone got in with the new token.
    expect(gitA.requests.filter((r) => !r.authorized).length).toBeGreaterThan(refusedBefore);
    expect(oauth.log.tokenRequests.filter((r) => r.provider === "gitlab" && r.ok && r.grantType === "refresh_token")).toHaveLength(refreshesBefore + 1);
    expect(server.output()).not.toContain(rotated);
    watched.assertNothingUnexpected();
  });
});

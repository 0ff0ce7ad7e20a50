import path from "node:path";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, launchBrowser, overflowsHorizontally, screenshot, watchedContext, type WatchedContext } from "../helpers/browser.js";
import { fixtureDocs } from "../helpers/doc-fixtures.js";
import { startGitServer, type GitServer, type TestRepo } from "../helpers/git-server.js";
import { ADMIN, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { libraryState } from "../helpers/volume.js";

let browser: Browser;
let server: TestServer;
let git: GitServer;
let repo: TestRepo;
let dataDir: string;
let watched: WatchedContext;
let page: Page;

beforeAll(async () => {
  git = await startGitServer("unused-token");
  repo = await git.createRepo("public", "acme", "tidewater", fixtureDocs("tidewater"));
  dataDir = tempDirForFile("lds-dash-accounts-");
  const host = new URL(git.base).host;
  server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: host, LDS_GIT_DEFAULT_HOST: host });
  browser = await launchBrowser();
  watched = await watchedContext(browser);
  await watched.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  page = await watched.newPage();
  await page.goto(`${server.url}/dashboard/accounts`);
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Teams, users and API keys" }).waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await git?.close();
});

describe("the dashboard: teams, keys and libraries, in Chromium", () => {
  it("creates a team and its owner, creates a key shown once with a copy button, and revokes it after confirmation", async () => {
    const teamForm = page.getByRole("form", { name: "Create a team" });
    await teamForm.getByLabel("Name").fill("docs");
    await teamForm.getByLabel("Plan").selectOption("pro");
    await teamForm.getByRole("button", { name: "Create team" }).click();
    await page.getByTestId("teams").getByRole("rowheader", { name: "docs" }).waitFor();
    // A successful submit clears the form's text fields.
    await expect.poll(() => teamForm.getByLabel("Name").inputValue()).toBe("");
    // The same name again: the API's message, shown as such.
    await teamForm.getByLabel("Name").fill("docs");
    await teamForm.getByRole("button", { name: "Create team" }).click();
    await watched.expectShown(/A team named docs already exists/);

    const userForm = page.getByRole("form", { name: "Add a user" });
    await userForm.getByLabel("Email").fill("owner@docs.test");
    await userForm.getByLabel("Role").selectOption("owner");
    await userForm.getByRole("button", { name: "Add user" }).click();
    await page.getByTestId("users").getByRole("rowheader", { name: "owner@docs.test" }).waitFor();

    const keyForm = page.getByRole("form", { name: "Create an API key" });
    await keyForm.getByLabel("Name (optional)").fill("ci");
    await keyForm.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByTestId("new-key");
    await shown.waitFor();
    const key = await shown.getByLabel("API key").inputValue();
    expect(key).toMatch(/^\S{20,}$/);
    await shown.getByRole("button", { name: "Copy" }).click();
    await shown.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    // The key works against the public API.
    const search = await fetch(`${server.url}/v2/libs/search?libraryName=anything`, { headers: { authorization: `Bearer ${key}` } });
    expect(search.status).not.toBe(401);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "accounts");
    await shown.getByRole("button", { name: "I have stored it" }).click();
    expect(await page.content()).not.toContain(key);

    const prefix = (await page.getByTestId("keys").locator("tbody th").first().textContent())!.replace("…", "");
    await page.getByRole("button", { name: `Revoke ${prefix}` }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(await page.getByTestId("keys").getByText("active").count()).toBe(1);
    await page.getByRole("button", { name: `Revoke ${prefix}` }).click();
    await dialog.getByRole("button", { name: "Revoke key" }).click();
    await page
      .getByTestId("keys")
      .getByText(/^revoked/)
      .waitFor();
    const refused = await fetch(`${server.url}/v2/libs/search?libraryName=anything`, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
    watched.assertNothingUnexpected();
  });

  it("submits a repository, follows it to finalized, refreshes it and removes it after confirmation", async () => {
    await page.getByRole("link", { name: "Libraries" }).click();
    await page.getByRole("heading", { name: "Libraries", level: 1 }).waitFor();
    await page.getByLabel("Repository URL").fill("ftp://example.invalid/x");
    await page.getByRole("button", { name: "Submit" }).click();
    await watched.expectShown(/repository_url_invalid|not allowed|URL/);

    await page.getByLabel("Repository URL").fill(repo.url);
    await page.getByLabel("For team").selectOption("docs");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByText(/was submitted for processing/).waitFor();
    const table = page.getByTestId("libraries");
    await table.getByText("finalized").waitFor({ timeout: 90_000 });
    const row = table.locator("tbody tr").first();
    expect(Number(await row.locator("td").nth(1).textContent())).toBeGreaterThan(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "libraries");

    const id = (await row.locator(".library-id").textContent())!;
    const before = JSON.parse(new Database(path.join(dataDir, "lds.db"), { readonly: true }).prepare("SELECT branches FROM libraries WHERE id = ?").pluck().get(id) as string)[0].fetchedAt;
    await repo.commit({ "docs/extra.md": "# Extra\n\nA page added after the first ingestion, about tide tables.\n" });
    await row.getByRole("button", { name: `Refresh ${id}` }).click();
    await page.getByText(/Refresh of .* started/).waitFor();
    await expect
      .poll(
        () => {
          const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
          try {
            return JSON.parse(db.prepare("SELECT branches FROM libraries WHERE id = ?").pluck().get(id) as string)[0].fetchedAt !== before && libraryState(dataDir, id)?.state;
          } finally {
            db.close();
          }
        },
        { timeout: 90_000 },
      )
      .toBe("finalized");

    await row.getByRole("button", { name: `Remove ${id}` }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.textContent()).toContain(id);
    await dialog.getByRole("button", { name: "Remove library" }).click();
    await page.getByText(`Removed ${id}.`).waitFor();
    await page.getByText("No libraries yet").waitFor();
    expect(libraryState(dataDir, id)).toBeUndefined();
    watched.assertNothingUnexpected();
  });

  it("an expired session leads to sign-in and back to the same page", async () => {
    await page.getByRole("link", { name: "Teams & keys" }).click();
    await page.getByRole("heading", { name: "Teams, users and API keys" }).waitFor();
    await page.getByTestId("users").getByRole("rowheader", { name: "owner@docs.test" }).waitFor();
    const db = new Database(path.join(dataDir, "lds.db"));
    db.prepare("UPDATE admin_sessions SET expires_at = '2000-01-01T00:00:00.000Z'").run();
    db.close();
    // The operator moves on to Libraries, as the nav's links do (router.ts's navigate). Through the app's router,
    // not a click on the nav: a request of the previous page still in flight may (rightly) bring sign-in up first,
    // and the nav with it would be gone.
    await page.evaluate(() => {
      history.pushState(null, "", "/dashboard/libraries");
      dispatchEvent(new PopStateEvent("popstate"));
    });
    await page.getByRole("heading", { name: "Sign in to LDS" }).waitFor();
    expect(page.url()).toBe(`${server.url}/dashboard/libraries`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Libraries", level: 1 }).waitFor();
    expect(page.url()).toBe(`${server.url}/dashboard/libraries`);
    watched.assertNothingUnexpected();
  });

  it("every page has no serious accessibility violation, is keyboard-reachable and fits a 375 px screen", async () => {
    const narrow = await watchedContext(browser, { width: 375, height: 740 });
    await narrow.context.addCookies(await watched.context.cookies());
    const phone = await narrow.newPage();
    for (const [name, title] of [
      ["", "Overview"],
      ["backups", "Backups"],
      ["restore", "Restore"],
      ["libraries", "Libraries"],
      ["accounts", "Teams, users and API keys"],
    ] as const) {
      for (const p of [page, phone]) {
        await p.goto(`${server.url}/dashboard/${name}`);
        await p.getByRole("heading", { name: title, level: 1 }).waitFor();
        await p.waitForLoadState("networkidle");
        expect(await accessibilityViolations(p), `${name || "overview"} at ${p.viewportSize()?.width}px`).toEqual([]);
        expect(await overflowsHorizontally(p), `${name || "overview"} wider than ${p.viewportSize()?.width}px`).toBe(false);
      }
      if (name === "") await screenshot(page, "overview");
      if (name === "backups") await screenshot(phone, "backups-375px");
    }
    // Keyboard: the skip link comes first, and Tab reaches the navigation with a visible focus ring.
    await page.goto(`${server.url}/dashboard/`);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Overview");
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe("none");
    await page.keyboard.press("Enter");
    watched.assertNothingUnexpected();
    narrow.assertNothingUnexpected();
  });

  it("serves the dashboard with a strict Content-Security-Policy and cacheable assets; / and /admin lead to it", async () => {
    const index = await fetch(`${server.url}/dashboard/libraries`);
    expect(index.status).toBe(200);
    const csp = index.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    const html = await index.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)|style=/);
    const asset = /src="(\/dashboard\/assets\/app-[^"]+\.js)"/.exec(html)![1]!;
    const js = await fetch(server.url + asset);
    expect(js.headers.get("cache-control")).toContain("immutable");
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    const again = await fetch(server.url + asset, { headers: { "if-none-match": js.headers.get("etag")! } });
    expect(again.status).toBe(304);
    expect((await fetch(`${server.url}/dashboard/assets/nothing.js`)).status).toBe(404);
    for (const entry of ["/", "/admin", "/dashboard"]) {
      const r = await fetch(server.url + entry, { redirect: "manual" });
      expect(r.status).toBe(302);
      expect(r.headers.get("location")).toBe("/dashboard/");
    }
  });
});

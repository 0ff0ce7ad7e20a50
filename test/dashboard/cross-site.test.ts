import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../helpers/browser.js";
import { ADMIN, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";

/**
 * Issue 39 item 4, as a browser does it: a page on another port of the same host is the same SITE, so the admin's
 * SameSite=Strict cookie goes with its requests; only the same-origin check stands between it and the admin API.
 * On 0.7.10 `/%61pi/backup` slipped past that check (it tested the raw URL) and started a backup.
 */
let browser: Browser;
let context: BrowserContext;
let server: TestServer;
let attacker: http.Server;
let attackerUrl: string;

/** The other site's page: a request that needs no preflight (a GET, or a POST of text/plain), with the target's cookies. */
const attackPage = (target: string, method: string) => `<!doctype html><title>waiting</title><script>
fetch(${JSON.stringify(target)}, { method: ${JSON.stringify(method)}, mode: "no-cors", credentials: "include", ...(${JSON.stringify(method)} === "POST" ? { headers: { "content-type": "text/plain" }, body: "{}" } : {}) })
  .then(() => { document.title = "sent"; }, () => { document.title = "failed"; });
</script>`;

/** Open the other site's page, which sends one request to the server; the server's answer as Chromium saw it. */
async function fromOtherSite(method: string, path: string) {
  const page = await context.newPage();
  const answered = page.waitForResponse((r) => r.request().method() === method && r.url().startsWith(server.url), { timeout: 30_000 });
  await page.goto(`${attackerUrl}/?method=${method}&target=${encodeURIComponent(server.url + path)}`);
  const status = (await answered).status();
  await expect.poll(() => page.title(), { timeout: 30_000 }).toBe("sent");
  await page.close();
  return status;
}

beforeAll(async () => {
  server = await startServer(tempDirForFile("lds-cross-site-"));
  attacker = http.createServer((request, response) => {
    const query = new URL(request.url!, "http://x").searchParams;
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(attackPage(query.get("target")!, query.get("method")!));
  });
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  browser = await launchBrowser();
  context = await browser.newContext();
  // Signed in within this browser: the session cookie is in the context's jar, as after using the dashboard.
  expect((await context.request.post(`${server.url}/api/auth/login`, { data: ADMIN })).status()).toBe(200);
  const backups = tempDirForFile("lds-cross-site-dest-");
  const config = { destination: { type: "local", path: backups }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" };
  expect((await context.request.put(`${server.url}/api/backup/config`, { data: config })).status()).toBe(200);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await server?.stop();
});

describe("a page on another port of the same host, in Chromium (issue 39 item 4)", () => {
  it("posting to /%61pi/backup and /api/backup with the admin's cookie is refused, and no backup runs", async () => {
    expect(new URL(attackerUrl).hostname).toBe(new URL(server.url).hostname);
    // The SameSite=Strict cookie does go with the other port's requests: a read of the session answers 200.
    expect(await fromOtherSite("GET", "/api/auth/session")).toBe(200);
    for (const path of ["/%61pi/backup", "/api/backup", "/%61pi/backup/drill", "/%61pi/auth/logout"]) {
      expect(await fromOtherSite("POST", path), path).toBe(403);
    }
    const status = await (await context.request.get(`${server.url}/api/backup/status`)).json();
    expect(status.running).toBeFalsy();
    expect(status.lastResult ?? null).toBeNull();
    expect((await (await context.request.get(`${server.url}/api/backup/runs`)).json()).runs).toEqual([]);
    // And the session is still the admin's: the page could not log it out either.
    expect((await context.request.get(`${server.url}/api/auth/session`)).status()).toBe(200);
  }, 120_000);
});

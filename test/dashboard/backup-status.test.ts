import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackupConfig, BackupStatus } from "../../src/server/api-types.js";
import { accessibilityViolations, launchBrowser, screenshot, watchedContext, type WatchedContext } from "../helpers/browser.js";
import { ADMIN, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { seedVolume } from "../helpers/volume.js";

let browser: Browser;
let server: TestServer;
let dataDir: string;
let watched: WatchedContext;
let page: Page;
let config: BackupConfig;

beforeAll(async () => {
  dataDir = tempDirForFile("lds-dash-status-");
  await seedVolume(dataDir);
  server = await startServer(dataDir, { INVOCATION_ID: "" });
  browser = await launchBrowser();
  watched = await watchedContext(browser);
  page = await watched.newPage();
  await page.goto(`${server.url}/dashboard/backups`);
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Backups", level: 1 }).waitFor();
  const archives = tempDirForFile("lds-dash-status-archives-");
  config = {
    destination: { type: "local", path: archives },
    schedule: { preset: "daily", cron: null, timezone: "UTC" },
    retention: { keep: null },
    compression: "none",
    encryption: { recipients: [] },
    drill: { schedule: "daily" },
  };
  await call("PUT", "/api/backup/config", config);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
});

/** The admin API from the signed-in page (its session cookie). */
function call<T>(method: string, url: string, body?: unknown): Promise<T> {
  return page.evaluate(
    async ([m, u, b]) => (await fetch(u, { method: m, headers: b === undefined ? {} : { "content-type": "application/json" }, body: b === undefined ? undefined : JSON.stringify(b) })).json(),
    [method, url, body] as [string, string, unknown],
  );
}

const status = () => call<BackupStatus>("GET", "/api/backup/status");

/** A backup, then a restore drill of it (as the daily drill runs one), both finished. */
async function backUpAndDrill(): Promise<BackupStatus> {
  const before = await status();
  await call("POST", "/api/backup");
  await eventually(async () => {
    const now = await status();
    return !now.running && now.lastResult?.startedAt !== before.lastResult?.startedAt;
  }, 60_000);
  await call("POST", "/api/backup/drill");
  return eventually(async () => {
    const now = await status();
    return now.lastDrill && now.lastDrill.at !== before.lastDrill?.at ? now : undefined;
  }, 60_000);
}

describe("the Backups page shows what the status answers", () => {
  it("the last restore drill and the next, and a scheduled run skipped since the last run", async () => {
    const drilled = await backUpAndDrill();
    expect(drilled.lastDrill).toMatchObject({ ok: true, archive: drilled.lastResult!.archive });
    expect(drilled.nextDrill).not.toBeNull();
    // What a running lds-backup holds: the scheduled run (every second for now) is skipped.
    fs.writeFileSync(path.join(dataDir, "backup.lock"), JSON.stringify({ pid: process.pid, hostname: os.hostname(), processStart: null, purpose: "backup", since: "2026-11-21T03:17:00Z" }));
    await call("PUT", "/api/backup/config", { ...config, schedule: { preset: "custom", cron: "* * * * * *", timezone: "UTC" } });
    await eventually(async () => (await status()).lastSkipped);
    await call("PUT", "/api/backup/config", config);
    fs.rmSync(path.join(dataDir, "backup.lock"));

    await page.reload();
    const drill = page.getByTestId("restore-drill");
    await expect.poll(() => drill.textContent()).toMatch(new RegExp(`^Last restore drill: passed ${drilled.lastResult!.archive!.replaceAll(".", "\\.")}, .+ in .+ · next `));
    await expect.poll(() => page.getByTestId("last-skipped").textContent()).toMatch(new RegExp(`^Skipped .+: .*already running.*pid ${process.pid}`));
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "backups-drill-and-skip");
    watched.assertNothingUnexpected();
  });

  it("an encrypted archive: its drill is skipped and says why, a newer run hides the old skip, and the restore preview names its encryption", async () => {
    const keys = tempDirForFile("lds-dash-status-keys-");
    execFileSync("age-keygen", ["-o", path.join(keys, "id.txt")], { stdio: "ignore" });
    const identity = fs.readFileSync(path.join(keys, "id.txt"), "utf8");
    const recipient = execFileSync("age-keygen", ["-y", path.join(keys, "id.txt")], { encoding: "utf8" }).trim();
    await call("PUT", "/api/backup/config", { ...config, encryption: { recipients: [recipient] } });
    const drilled = await backUpAndDrill();
    expect(drilled.lastDrill?.skipped).toMatch(/encrypted/);

    await page.reload();
    await expect.poll(() => page.getByTestId("restore-drill").textContent()).toMatch(/^Last restore drill: skipped \(.+\.tar\.age, .+\): the archive is encrypted.* · next /);
    expect(await page.getByTestId("last-skipped").count()).toBe(0);

    await page.goto(`${server.url}/dashboard/restore`);
    await page.locator("#archive").selectOption(drilled.lastResult!.archive!);
    await page.locator("#identity").fill(identity);
    await page.getByRole("button", { name: "Check this archive" }).click();
    // The answer holds the age header's stanza types: the page's own copy of the type said a string, and showed nothing.
    await expect.poll(() => page.getByTestId("encryption").textContent()).toBe("age, for 1 recipient");
    await screenshot(page, "restore-preview-encrypted");
    watched.assertNothingUnexpected();
  });
});

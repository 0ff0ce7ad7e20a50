import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, launchBrowser, screenshot, watchedContext, type WatchedContext } from "../helpers/browser.js";
import { startS3WithUser, type S3WithUser } from "../helpers/s3-iam.js";
import { freePort } from "../helpers/s3-server.js";
import { ADMIN, eventually, serverPid, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { addBallast, libraryIds, seedVolume } from "../helpers/volume.js";
import { LATEST_SCHEMA_VERSION } from "../../src/engine/sqlite/migrations.js";

let browser: Browser;
let server: TestServer;
let s3: S3WithUser;
let dataDir: string;
let base: string;
let watched: WatchedContext;
let page: Page;
/** The archive as the browser downloaded it, uploaded again by the restore test. */
let downloaded: string;

beforeAll(async () => {
  dataDir = tempDirForFile("lds-dash-volume-");
  await seedVolume(dataDir);
  // Big enough for a backup to take a few seconds, so that its progress can be watched.
  addBallast(dataDir, 256);
  // A fixed port: the server re-executes itself on it after staging a restore.
  const port = await freePort();
  server = await startServer(dataDir, { INVOCATION_ID: "" }, port);
  base = `http://127.0.0.1:${port}`;
  s3 = await startS3WithUser("dash-bucket", "");
  browser = await launchBrowser();
  watched = await watchedContext(browser);
  page = await watched.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  // Whatever process holds the volume now (the restore started a successor with its own pid).
  const pid = serverPid(dataDir);
  if (pid) process.kill(pid, "SIGTERM");
  await eventually(async () => !fs.existsSync(path.join(dataDir, "server.lock")), 30_000).catch(() => undefined);
  await s3?.server.stop();
});

async function signIn(p: Page) {
  await p.getByLabel("Username").fill(ADMIN.username);
  await p.getByLabel("Password").fill(ADMIN.password);
  await p.getByRole("button", { name: "Sign in" }).click();
}

describe("the dashboard: backups and restore, in Chromium", () => {
  it("signs in (a wrong password is shown as the API words it) and lands on the page that was asked for", async () => {
    await page.goto(`${base}/admin`);
    await expect.poll(() => page.url()).toBe(`${base}/dashboard/`);
    await page.goto(`${base}/dashboard/backups`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await watched.expectShown(/Wrong username or password/)).toMatch(/login_failed/);
    await signIn(page);
    await page.getByRole("heading", { name: "Backups", level: 1 }).waitFor();
    expect(page.url()).toBe(`${base}/dashboard/backups`);
    expect(await accessibilityViolations(page)).toEqual([]);
    watched.assertNothingUnexpected();
  });

  it("configures S3 and tests the connection: wrong credentials say what failed, good ones pass; the secret is never shown again", async () => {
    await page.getByLabel("S3 or S3-compatible").check();
    await page.getByLabel("Bucket").fill(s3.bucket);
    await page.getByLabel("Endpoint (S3-compatible stores)").fill(s3.server.endpoint);
    await page.getByLabel("Access key id").fill(s3.accessKeyId);
    await page.getByLabel("Secret access key").fill("not-the-secret");
    await page.getByLabel("Path-style addressing (most self-hosted stores)").check();
    expect(await page.getByLabel("Region").inputValue()).toBe("us-east-1");
    await page.getByRole("button", { name: "Test connection" }).click();
    const wrong = await watched.expectShown(/rejected the credentials/);
    expect(wrong).toMatch(/writing the probe object/);
    expect(wrong).toMatch(/destination\.secretAccessKey in the backup configuration/);
    expect(wrong).not.toContain("not-the-secret");

    await page.getByLabel("Secret access key").fill(s3.secretAccessKey);
    await page.getByRole("button", { name: "Test connection" }).click();
    await page.getByTestId("connection-ok").waitFor();
    expect(await page.getByTestId("connection-ok").textContent()).toContain(`s3://${s3.bucket}`);
    // A bucket the user may not write to (with IAM enforced, as on AWS, one that does not exist reads the same).
    await page.getByLabel("Bucket").fill("no-such-bucket");
    await page.getByRole("button", { name: "Test connection" }).click();
    expect(await watched.expectShown(/Access denied to s3:\/\/no-such-bucket/)).toMatch(/Allow s3:PutObject/);
    await page.getByLabel("Bucket").fill(s3.bucket);

    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Saved.").waitFor();
    await page.reload();
    await page.getByRole("button", { name: "Change" }).waitFor();
    expect(await page.content()).not.toContain(s3.secretAccessKey);
    expect(await page.locator("#s3-secret").count()).toBe(0);
    // Saved: testing again uses the stored secret, which the page never had.
    await page.getByRole("button", { name: "Test connection" }).click();
    await page.getByTestId("connection-ok").waitFor();
    await page.getByText(`At s3://${s3.bucket}`, { exact: true }).waitFor();
    await page.getByText("No archives there yet.").waitFor();
    watched.assertNothingUnexpected();
  });

  it("switches to a local destination, shows the next runs of a custom schedule as it is typed, and saves", async () => {
    const backups = tempDirForFile("lds-dash-archives-");
    await page.getByLabel("Local or network directory").check();
    await page.getByLabel("Directory (absolute path)").fill(backups);
    await page.getByRole("button", { name: "Test connection" }).click();
    await page.getByTestId("connection-ok").waitFor();
    expect(fs.readdirSync(backups)).toEqual([]);

    await page.getByLabel("When").selectOption("custom");
    await page.getByLabel("Cron expression").fill("15 4 * * 1");
    await expect.poll(() => page.getByTestId("next-runs").locator("li").count()).toBe(3);
    await page.getByLabel("Cron expression").fill("99 4 * * 1");
    await page.getByTestId("next-runs").getByText("Not a valid schedule").waitFor();
    await page.getByLabel("Cron expression").fill("15 4 * * 1");
    await page.getByLabel("Timezone").fill("Europe/Berlin");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Saved.").waitFor();
    await page.getByText(/Next scheduled backup: (?!none)/).waitFor();
    await screenshot(page, "backups-settings");
    watched.assertNothingUnexpected();
  });

  it("backs up now with live progress that survives a reload, then shows the run in the history and the archive to download", async () => {
    await page.getByRole("button", { name: "Back up now" }).click();
    await page.getByRole("button", { name: "Backing up…" }).waitFor();
    const progress = page.getByTestId("backup-progress");
    // The phase and its bytes, as the page polls them each second (the snapshot phase, at 0 B, lasts long enough).
    await expect.poll(async () => (await progress.isVisible()) && (await progress.textContent()), { timeout: 30_000 }).toMatch(/^\S.* · \d+(\.\d)? (B|KiB|MiB|GiB)/);
    await page.reload();
    // After the reload the page shows the progress again, unless the backup finished meanwhile (asked of the server
    // with the page's own session): one of the two, whichever comes first, never a wait on a state that has passed.
    const running = async () => ((await (await page.request.get(`${base}/api/backup/status`)).json()) as { running: boolean }).running;
    await expect.poll(async () => (await progress.isVisible()) || !(await running()), { timeout: 30_000 }).toBe(true);
    await page.getByTestId("run-history").getByText("succeeded").waitFor({ timeout: 90_000 });
    const row = page.getByTestId("archives").locator("tbody tr").first();
    const name = (await row.locator("td").first().textContent())!;
    expect(name).toMatch(/^lds-backup-\d{8}T\d{6}Z\.tar$/);
    expect(await page.getByTestId("run-history").textContent()).toContain(name);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.locator("#history").scrollIntoViewIfNeeded();
    await screenshot(page, "backups");

    const [download] = await Promise.all([page.waitForEvent("download"), row.getByRole("link", { name: `Download ${name}` }).click()]);
    expect(download.suggestedFilename()).toBe(name);
    const saved = path.join(tempDirForFile("lds-dash-download-"), name);
    await download.saveAs(saved);
    downloaded = saved;
    const archiveDir = (await page.getByText(/^At \//).textContent())!.slice(3);
    expect(fs.readFileSync(saved).equals(fs.readFileSync(path.join(archiveDir, name)))).toBe(true);
    watched.assertNothingUnexpected();
  });

  it("restores the archive: preview, typed confirmation, restart, and the outcome with the pre-restore directory", async () => {
    // A library added after the backup: the restore must take it away (and keep it in pre-restore-…).
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(path.join(dataDir, "lds.db"));
    db.prepare("INSERT INTO libraries (id, title, source) VALUES ('/after/backup', 'later', 'git')").run();
    db.close();

    await page
      .getByTestId("archives")
      .getByRole("link", { name: /^Restore / })
      .first()
      .click();
    await page.getByRole("heading", { name: "Restore", level: 1 }).waitFor();
    // An upload is checked the same way (the size limit is shown); back to the list afterwards.
    expect(await page.getByText(/^Up to \d/).textContent()).toMatch(/GiB/);
    await page.getByLabel("Archive file").setInputFiles(downloaded);
    await page.getByRole("button", { name: "Upload and check" }).click();
    await page.getByTestId("restore-preview").getByRole("heading", { name: "Uploaded archive" }).waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("restore-preview").textContent()).toContain("/acme/widgets");
    await page.getByRole("button", { name: "Back" }).click();
    await page.getByRole("button", { name: "Check this archive" }).click();
    const preview = page.getByTestId("restore-preview");
    await preview.waitFor();
    expect(await preview.getByTestId("restorable").textContent()).toBe("yes");
    expect(await preview.textContent()).toContain("/acme/widgets");
    expect(await preview.textContent()).toContain("/acme/gadgets");
    expect(await preview.textContent()).not.toContain("/after/backup");
    expect(await preview.textContent()).toContain(`schema ${LATEST_SCHEMA_VERSION}`);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "restore-preview");

    await page.getByRole("button", { name: "Restore this archive…" }).click();
    const dialog = page.getByRole("dialog");
    const confirm = dialog.getByRole("button", { name: "Stage the restore and restart" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type .* to confirm/).fill("wrong word");
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type .* to confirm/).fill(path.basename(dataDir));
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "restore-confirm");
    await confirm.click();

    await page.getByTestId("restore-waiting").waitFor();
    const outcome = page.getByTestId("restore-outcome");
    await outcome.waitFor({ timeout: 90_000 });
    expect(await outcome.getByRole("heading").textContent()).toBe("Restore applied");
    const kept = (await outcome.getByTestId("pre-restore-dir").textContent())!;
    expect(path.basename(kept)).toMatch(/^pre-restore-/);
    expect(fs.existsSync(kept)).toBe(true);
    expect(libraryIds(dataDir)).toEqual(["/acme/gadgets", "/acme/widgets"]);
    expect(libraryIds(kept)).toContain("/after/backup");
    expect(serverPid(dataDir)).not.toBe(server.child.pid);
    await screenshot(page, "restore-outcome");
    watched.assertNothingUnexpected();
  });
});

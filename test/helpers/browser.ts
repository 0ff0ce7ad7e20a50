import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { expect } from "vitest";
import { ROOT } from "./cli.js";
import { tempDirForFile } from "./temp.js";

/** Debian's chromium, installed by scripts/test-deps.sh (browser downloads are unavailable). */
const CHROMIUM = process.env.LDS_CHROMIUM ?? "/usr/bin/chromium";

/** Flags that keep Chromium from reaching for the network on its own (refused here, and slow to fail). */
const QUIET = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

export function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: run bash scripts/test-deps.sh (it installs Debian's chromium).`);
  return chromium.launch({ executablePath: CHROMIUM, args: QUIET, timeout: 60_000 });
}

/**
 * A browser context that records every error the dashboard shows (each element with role=alert, seen by a
 * MutationObserver, also one that flashes by), every uncaught exception and every Content-Security-Policy
 * violation. `expectShown` waits for an error a test provokes; `assertNothingUnexpected` fails on any other.
 */
export async function watchedContext(browser: Browser, options: { width?: number; height?: number } = {}) {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1100, height: options.height ?? 800 }, acceptDownloads: true });
  const shown: Array<{ text: string; expected: boolean }> = [];
  const problems: string[] = [];
  await context.exposeBinding("__ldsErrorShown", (_source, text: string) => void shown.push({ text, expected: false }));
  await context.addInitScript(() => {
    // By element and text: the page may reuse an alert's element for the next error.
    const seen = new WeakMap<Element, string>();
    const look = () => {
      for (const el of Array.from(document.querySelectorAll("[role=alert]"))) {
        const text = el.textContent ?? "";
        if (seen.get(el) === text) continue;
        seen.set(el, text);
        (window as unknown as { __ldsErrorShown: (t: string) => void }).__ldsErrorShown(text);
      }
    };
    new MutationObserver(look).observe(document, { subtree: true, childList: true, characterData: true });
  });
  const watch = (page: Page) => {
    page.on("pageerror", (err) => problems.push(`uncaught: ${err.message}`));
    // A renderer that crashes leaves every later locator waiting until its timeout: say so instead.
    page.on("crash", () => {
      problems.push("the page's renderer crashed");
      process.stderr.write(`Chromium's renderer crashed on ${page.url()}\n`);
    });
    page.on("console", (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
    });
  };
  context.on("page", watch);
  return {
    context,
    async newPage(): Promise<Page> {
      return context.newPage();
    },
    /** Wait until an error matching `pattern` was shown, and count it as expected. */
    async expectShown(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const match = shown.find((s) => !s.expected && pattern.test(s.text));
        if (match) {
          match.expected = true;
          return match.text;
        }
        if (Date.now() > until) throw new Error(`No error matching ${pattern} was shown; shown: ${JSON.stringify(shown.map((s) => s.text))}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    assertNothingUnexpected(): void {
      expect(problems, "uncaught exceptions or CSP violations").toEqual([]);
      expect(
        shown.filter((s) => !s.expected).map((s) => s.text),
        "errors the page showed",
      ).toEqual([]);
    },
  };
}

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** axe-core in the page: the serious and critical violations (none is the goal), as "rule: target" lines. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    (window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run(document),
  );
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/**
 * Screenshots for docs/dashboard.md: written into docs/dashboard/ when LDS_UPDATE_SCREENSHOTS=1 (then committed),
 * else into a temporary folder, so that a test run leaves the work tree as it was.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = process.env.LDS_UPDATE_SCREENSHOTS === "1" ? path.join(ROOT, "docs", "dashboard") : tempDirForFile("lds-shots-");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

/** The page is no wider than its viewport (usable at 375 px without sideways scrolling). */
export async function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
}

export type WatchedContext = Awaited<ReturnType<typeof watchedContext>>;
export type { BrowserContext };

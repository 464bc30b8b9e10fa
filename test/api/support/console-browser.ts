import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { waitUntil } from "../../support/processes.js";

/** Debian's chromium, the one the test setup installs. */
const CHROMIUM = "/usr/bin/chromium";
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A console test's browser: headless chromium driven by playwright-core against a real api at
 * `base`, with full-page screenshots kept in a `tenor-console-<tag>-*` folder under the system's
 * temporary directory.
 */
export interface ConsoleBrowser {
  browser: Browser;
  /** Where the screenshots are. */
  shots: string;
  /** Takes a full-page screenshot named `name` and checks it is a real PNG. */
  screenshot(page: Page, name: string): Promise<void>;
  /**
   * Opens `url` once the api would take it. Chromium's full-page screenshots starve the api
   * process on a small machine; its event-loop lag then makes admission refuse the next request
   * (503 OVERLOADED) and /readyz report it, so the page waits, as a load balancer would, for /readyz.
   */
  visit(page: Page, url: string): Promise<void>;
  /** Signs in with `key` on a fresh page of its own and waits for the page its kind lands on. */
  signIn(key: string, landing: string): Promise<Page>;
  close(): Promise<void>;
}

export async function launchConsoleBrowser(base: string, tag: string): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
  const shots = mkdtempSync(path.join(tmpdir(), `tenor-console-${tag}-`));
  const visit = async (page: Page, url: string) => {
    await waitUntil("the api ready to take a request", async () => (await fetch(`${base}/readyz`)).ok);
    await page.goto(url);
  };
  return {
    browser,
    shots,
    async screenshot(page, name) {
      const file = path.join(shots, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      const bytes = readFileSync(file);
      expect(bytes.length).toBeGreaterThan(1000);
      expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    },
    visit,
    async signIn(key, landing) {
      const page = await (await browser.newContext()).newPage();
      await visit(page, `${base}/console/sign-in`);
      await page.fill("#key", key);
      await Promise.all([page.waitForURL(`${base}${landing}`), page.click("button[type=submit]")]);
      return page;
    },
    close: () => browser.close(),
  };
}

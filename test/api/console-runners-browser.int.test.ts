import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { waitUntil } from "../support/processes.js";
import { eventually } from "../support/role-process.js";

/**
 * The console's runners page as an operator uses it: Debian's chromium, headless, against the
 * real api and runner roles; the runner is then killed with -9 and the page must say so.
 * Screenshots go to a `tenor-console-runners-*` folder under the system's temporary directory.
 */
const CHROMIUM = "/usr/bin/chromium";
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let h: RolesHarness;
let browser: Browser;
const shots = mkdtempSync(path.join(tmpdir(), "tenor-console-runners-"));

beforeAll(async () => {
  // Chromium's screenshots starve the api on a small machine: a page load must not meet a 503.
  h = await startRolesHarness(import.meta.url, { shedOnEventLoopLag: false });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(shots, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  const bytes = readFileSync(file);
  expect(bytes.length).toBeGreaterThan(1000);
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
}

/** Opens a console page once the api would take it (see test/api/console-browser.int.test.ts). */
async function visit(page: Page, url: string): Promise<void> {
  await waitUntil("the api ready to take a request", async () => (await fetch(`${h.base}/readyz`)).ok);
  await page.goto(url);
}

async function signIn(page: Page, key: string, landing: string): Promise<void> {
  await visit(page, `${h.base}/console/sign-in`);
  await page.fill("#key", key);
  await Promise.all([page.waitForURL(`${h.base}${landing}`), page.click("button[type=submit]")]);
}

describe("the runners page in a browser", () => {
  it("shows the live runner to both kinds of key, and says so when it dies", async () => {
    const pid = h.runnerPid();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, h.keys.operator, "/console");
    await Promise.all([page.waitForURL(`${h.base}/console/runners`), page.click("nav >> text=Runners")]);
    await eventually("the runner's row", async () => {
      await visit(page, `${h.base}/console/runners`);
      return (await page.locator(`tr[data-replica*=":${pid}:"]`).count()) === 1;
    });
    const runner = page.locator(`tr[data-replica*=":${pid}:"]`);
    expect(await runner.textContent()).toContain("live");
    expect(await runner.textContent()).toContain("demo.asset-issue@");
    expect(await runner.textContent()).toMatch(/0 of \d+/);
    expect(await page.locator('[data-live="runner"]').textContent()).toBe("1");
    expect(await page.locator('[data-owned="runner"]').textContent()).toBe("64/64");
    expect(await page.locator(".alert").count()).toBe(0);
    await screenshot(page, "runners-live");

    // A platform key opens the same page from the platform's side of the console.
    const platform = await (await browser.newContext()).newPage();
    await signIn(platform, h.keys.platformOperator, "/console/schedules");
    await visit(platform, `${h.base}/console/runners`);
    expect(platform.url()).toBe(`${h.base}/console/runners`);
    expect(await platform.locator('[data-live="runner"]').textContent()).toBe("1");

    await h.killRunner();
    await eventually("the page tells the runner is gone", async () => {
      await visit(page, `${h.base}/console/runners`);
      return (await page.locator('[data-live="runner"]').textContent()) === "0";
    });
    expect(await page.locator(".alert").first().textContent()).toContain("No live runner");
    expect(await page.locator(".alert").nth(1).textContent()).toContain(
      "64 of 64 runner shards have no owner",
    );
    expect(await runner.textContent()).toContain("not live");
    await screenshot(page, "runners-none");
  }, 120_000);
});

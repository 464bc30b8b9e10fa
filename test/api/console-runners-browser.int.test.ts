import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { eventually } from "../support/role-process.js";
import { type ConsoleBrowser, launchConsoleBrowser } from "./support/console-browser.js";

/**
 * The console's runners page as an operator uses it: Debian's chromium, headless, against the
 * real api and runner roles; the runner is then killed with -9 and the page must say so.
 * Screenshots go to a `tenor-console-runners-*` folder under the system's temporary directory.
 */
let h: RolesHarness;
let b: ConsoleBrowser;

beforeAll(async () => {
  // Chromium's screenshots starve the api on a small machine: a page load must not meet a 503.
  h = await startRolesHarness(import.meta.url, { shedOnEventLoopLag: false });
  b = await launchConsoleBrowser(h.base, "runners");
}, 200_000);

afterAll(async () => {
  await b?.close();
  await h?.stop();
});

describe("the runners page in a browser", () => {
  it("shows the live runner to both kinds of key, and says so when it dies", async () => {
    const pid = h.runnerPid();
    const page = await b.signIn(h.keys.operator, "/console");
    await Promise.all([page.waitForURL(`${h.base}/console/runners`), page.click("nav >> text=Runners")]);
    await eventually("the runner's row", async () => {
      await b.visit(page, `${h.base}/console/runners`);
      return (await page.locator(`tr[data-replica*=":${pid}:"]`).count()) === 1;
    });
    const runner = page.locator(`tr[data-replica*=":${pid}:"]`);
    expect(await runner.textContent()).toContain("live");
    expect(await runner.textContent()).toContain("demo.asset-issue@");
    expect(await runner.textContent()).toMatch(/0 of \d+/);
    expect(await page.locator('[data-live="runner"]').textContent()).toBe("1");
    expect(await page.locator('[data-owned="runner"]').textContent()).toBe("64/64");
    expect(await page.locator(".alert").count()).toBe(0);
    await b.screenshot(page, "runners-live");

    // A platform key opens the same page from the platform's side of the console.
    const platform = await b.signIn(h.keys.platformOperator, "/console/schedules");
    await b.visit(platform, `${h.base}/console/runners`);
    expect(platform.url()).toBe(`${h.base}/console/runners`);
    expect(await platform.locator('[data-live="runner"]').textContent()).toBe("1");

    await h.killRunner();
    await eventually("the page tells the runner is gone", async () => {
      await b.visit(page, `${h.base}/console/runners`);
      return (await page.locator('[data-live="runner"]').textContent()) === "0";
    });
    expect(await page.locator(".alert").first().textContent()).toContain("No live runner");
    expect(await page.locator(".alert").nth(1).textContent()).toContain(
      "64 of 64 runner shards have no owner",
    );
    expect(await runner.textContent()).toContain("not live");
    await b.screenshot(page, "runners-none");
  }, 120_000);
});

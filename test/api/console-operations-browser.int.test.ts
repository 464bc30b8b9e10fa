import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { waitUntil } from "../support/processes.js";
import { type ConsoleBrowser, launchConsoleBrowser } from "./support/console-browser.js";

/**
 * The console's operations pages and its time zone as an operator uses them: Debian's chromium,
 * headless, against the real api and runner roles (docs/console.md, "Bulk operations", "Times").
 * Screenshots go to a `tenor-console-operations-*` folder under the system's temporary directory.
 */
let h: RolesHarness;
let b: ConsoleBrowser;
const RUNS = 3;
let ids: string[] = [];
/** The first operation's page, created by the first test. */
let operationUrl = "";

beforeAll(async () => {
  // Chromium's screenshots starve the api on a small machine: a page load must not meet a 503.
  h = await startRolesHarness(import.meta.url, {
    shedOnEventLoopLag: false,
    operations: { batchSize: 2, intervalMs: 200 },
  });
  b = await launchConsoleBrowser(h.base, "operations");
  ids = await h.startDemosAwaitingApproval(Array.from({ length: RUNS }, (_, i) => `CON${i}`));
}, 240_000);

afterAll(async () => {
  await b?.close();
  await h?.stop();
});

/** Reloads `page` until `predicate` holds: the detail page shows progress as the runners make it. */
async function reloadUntil(page: Page, url: string, what: string, predicate: () => Promise<boolean>) {
  await waitUntil(
    what,
    async () => {
      await b.visit(page, url);
      return predicate();
    },
    { timeoutMs: 120_000 },
  );
}

async function auditOutcomes(action: string): Promise<string[]> {
  const { rows } = await h.pool.query<{ outcome: string }>(
    "SELECT outcome FROM audit_events WHERE action = $1 ORDER BY id",
    [action],
  );
  return rows.map((r) => r.outcome);
}

describe("the operations page in a browser", () => {
  it("counts first, creates on confirm, then shows progress and each refused run with its code and a link", async () => {
    const page = await b.signIn(h.keys.operator, "/console");
    await Promise.all([
      page.waitForURL(`${h.base}/console/operations`),
      page.click("nav >> text=Operations"),
    ]);
    expect(await page.locator("text=No operation yet.").count()).toBe(1);
    await b.screenshot(page, "operations-empty");

    await page.selectOption("#action", "resume");
    await page.fill("#filter-workflow", "demo.asset-issue");
    await page.check('input[name="filter.status"][value="waiting"]');
    await Promise.all([
      page.waitForURL(`${h.base}/console/operations/count`),
      page.click("text=Count the runs"),
    ]);
    expect(await page.locator("[data-matched]").textContent()).toBe(String(RUNS));
    // Counting creates nothing.
    expect((await h.pool.query("SELECT 1 FROM operations")).rowCount).toBe(0);
    await b.screenshot(page, "operations-count");

    await Promise.all([
      page.waitForURL(/\/console\/operations\/[0-9a-f-]{36}\?notice=created$/),
      page.click(`text=Confirm: resume ${RUNS} runs`),
    ]);
    operationUrl = page.url().replace(/\?.*$/, "");
    expect(await page.locator("[data-action]").textContent()).toBe("resume");
    // A run waiting for its approval is not suspended: resume refuses each, with its code.
    await reloadUntil(page, operationUrl, "the operation completed", async () =>
      ((await page.locator("h2 .status").textContent()) ?? "").includes("completed"),
    );
    expect(await page.locator("[data-progress]").textContent()).toMatch(
      new RegExp(`${RUNS} of ${RUNS} done: 0 succeeded,\\s+${RUNS} failed, 0 pending`),
    );
    expect(await page.locator("tr[data-failure]").count()).toBe(RUNS);
    expect(await page.locator("tr[data-failure] code").first().textContent()).toBe("EXECUTION_NOT_SUSPENDED");
    expect(await page.locator("text=Abort").count()).toBe(0);
    await b.screenshot(page, "operations-failures");

    const run = (await page.locator("tr[data-failure]").first().getAttribute("data-failure")) ?? "";
    expect(ids).toContain(run);
    await Promise.all([page.waitForURL(`${h.base}/console/executions/${run}`), page.click(`text=${run}`)]);

    await b.visit(page, `${h.base}/console/operations`);
    expect(await page.locator("tr[data-operation]").count()).toBe(1);
    expect(await page.locator("tr[data-operation]").textContent()).toContain(
      `${RUNS} of ${RUNS} (${RUNS} failed)`,
    );
    await page.context().close();
  }, 240_000);

  it("refuses an empty filter on the form with its code, and lets an operator abort a running operation", async () => {
    const page = await b.signIn(h.keys.operator, "/console");
    await b.visit(page, `${h.base}/console/operations`);
    await page.selectOption("#action", "cancel");
    await page.click("text=Count the runs");
    expect(await page.locator(".alert").textContent()).toContain("OPERATION_FILTER_EMPTY");

    // With no runner alive, nothing acts on the operation: it stays running until aborted.
    await h.killRunner();
    await page.selectOption("#action", "cancel");
    await page.fill("#filter-workflow", "demo.asset-issue");
    await page.fill("#param-reason", "wrong batch");
    await page.click("text=Count the runs");
    await Promise.all([page.waitForURL(/notice=created$/), page.click(`text=Confirm: cancel ${RUNS} runs`)]);
    expect(await page.locator("[data-parameters]").textContent()).toContain('reason: "wrong batch"');
    expect(await page.locator("[data-progress]").textContent()).toMatch(new RegExp(`0 of ${RUNS} done`));
    await b.screenshot(page, "operations-running");
    await Promise.all([
      page.waitForURL(/notice=aborted$/),
      page.getByRole("button", { name: "Abort" }).click(),
    ]);
    // Asked while no runner lives: the abort is recorded, and the runner started next ends it.
    expect(await page.locator("text=a runner stops it at its next pass").count()).toBe(1);
    expect(await page.getByRole("button", { name: "Abort" }).count()).toBe(0);
    const aborted = page.url().replace(/\?.*$/, "");
    await h.restartRunner();
    await reloadUntil(page, aborted, "the operation aborted", async () =>
      ((await page.locator("h2 .status").textContent()) ?? "").includes("aborted"),
    );
    expect(await page.locator("[data-progress]").textContent()).toMatch(new RegExp(`0 of ${RUNS} done`));
    await b.screenshot(page, "operations-aborted");
    // The runs were left untouched.
    for (const id of ids)
      expect((await h.call("operator", "GET", `/v1/executions/${id}`)).body.status).toBe("waiting");

    await waitUntil("the audit rows of the console's operations", async () => {
      const created = await auditOutcomes("operation.create");
      const aborted = await auditOutcomes("operation.abort");
      return (
        created.filter((o) => o === "accepted").length === 4 &&
        created.includes("OPERATION_FILTER_EMPTY") &&
        aborted.includes("accepted")
      );
    });
    await page.context().close();
  }, 240_000);

  it("is refused to roles that may not run operations", async () => {
    const page = await b.signIn(h.keys.integrator, "/console");
    const answer = await page.goto(`${h.base}/console/operations`);
    expect(answer?.status()).toBe(403);
    expect(await page.locator(".alert").textContent()).toContain("FORBIDDEN");
    const detail = await page.goto(operationUrl);
    expect(detail?.status()).toBe(403);
    await page.context().close();
  });
});

describe("the viewer's time zone in a browser", () => {
  it("writes times in a chosen IANA zone on every page, remembers it, and refuses an unknown one", async () => {
    const page = await b.signIn(h.keys.operator, "/console");
    expect(await page.locator("[data-zone]").textContent()).toBe("UTC");
    expect(await page.locator("tbody time").first().textContent()).toMatch(/ UTC$/);

    await b.visit(page, `${h.base}/console?tz=Europe/Berlin`);
    expect(await page.locator("[data-zone]").textContent()).toBe("Europe/Berlin");
    const cell = page.locator("tbody time").first();
    const instant = Date.parse((await cell.getAttribute("datetime")) ?? "");
    const berlin = new Date(instant + 3_600_000).toISOString().slice(0, 19).replace("T", " ");
    expect(await cell.textContent()).toBe(`${berlin} UTC+01:00`);
    expect(await page.locator("tbody .ago").first().textContent()).toMatch(/ago\)$/);
    await b.screenshot(page, "times-berlin-list");

    // Remembered on the console's other pages, without the parameter.
    await b.visit(page, `${h.base}/console/executions/${ids[0]}`);
    expect(await page.locator("[data-zone]").textContent()).toBe("Europe/Berlin");
    expect(await page.locator("time").first().textContent()).toMatch(/ UTC\+01:00$/);
    await b.visit(page, operationUrl);
    expect(await page.locator("time").first().textContent()).toMatch(/ UTC\+01:00$/);
    await b.visit(page, `${h.base}/console/runners`);
    expect(await page.locator("[data-zone]").textContent()).toBe("Europe/Berlin");

    // The picker returns to the page it was opened from.
    await Promise.all([
      page.waitForURL(/\/console\/time-zone\?return=/),
      page.getByRole("link", { name: "change" }).click(),
    ]);
    await page.selectOption("#tz", "Asia/Tokyo");
    await Promise.all([
      page.waitForURL(`${h.base}/console/runners?tz=Asia%2FTokyo`),
      page.click("text=Use this zone"),
    ]);
    expect(await page.locator("[data-zone]").textContent()).toBe("Asia/Tokyo");
    await b.visit(page, `${h.base}/console/executions/${ids[0]}`);
    expect(await page.locator("time").first().textContent()).toMatch(/ UTC\+09:00$/);
    await b.screenshot(page, "times-tokyo-run");

    const refused = await page.goto(`${h.base}/console?tz=Mars/Olympus`);
    expect(refused?.status()).toBe(400);
    expect(await page.locator(".alert").textContent()).toMatch(
      /REQUEST_INVALID:\s+query\.tz: "Mars\/Olympus" is not an IANA time zone/,
    );
    // The refusal changed nothing: the remembered zone stands.
    await b.visit(page, `${h.base}/console`);
    expect(await page.locator("[data-zone]").textContent()).toBe("Asia/Tokyo");
    await page.context().close();
  }, 240_000);
});

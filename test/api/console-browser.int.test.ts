import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { startHeldRun } from "../cli/support/held-run.js";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { waitUntil } from "../support/processes.js";
import { eventually } from "../support/role-process.js";

/**
 * The web console as people use it: Debian's chromium, headless, driven by playwright-core against
 * the real api role, with the real runner advancing the release's demo workflow.
 */
const CHROMIUM = "/usr/bin/chromium";
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let h: RolesHarness;
let browser: Browser;
const shots = mkdtempSync(path.join(tmpdir(), "tenor-console-"));

beforeAll(async () => {
  // Chromium starves the api on a small machine, and a sign-in POST that met a 503 for event-loop
  // lag never reached its redirect; the page loads wait for /readyz (visit below) either way.
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

/**
 * Opens a console page once the api would take it. Chromium's full-page screenshots starve the
 * api process on a small machine; its event-loop lag then makes admission refuse the next request
 * (503 OVERLOADED) and /readyz report it, so the page waits, as a load balancer would, for /readyz.
 */
async function visit(page: Page, url: string): Promise<void> {
  await waitUntil("the api ready to take a request", async () => (await fetch(`${h.base}/readyz`)).ok);
  await page.goto(url);
}

async function signIn(page: Page, key: string): Promise<void> {
  await visit(page, `${h.base}/console`);
  expect(new URL(page.url()).pathname).toBe("/console/sign-in");
  await page.fill("#key", key);
  await Promise.all([page.waitForURL(`${h.base}/console`), page.click("button[type=submit]")]);
}

describe("the web console in a browser", () => {
  it("lists runs with counts, shows a waiting and a failed run, and an approver approves from the page", async () => {
    const waiting = await h.startDemo({ symbol: "WEB", approvalTimeout: "10m", settle: "10ms" });
    const failed = await h.startDemo({ symbol: "LATE", approvalTimeout: "1s", settle: "10ms" });
    await h.waitFor(
      waiting,
      (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval",
      "the approval wait",
    );
    await h.waitFor(failed, (e) => e.status === "failed", "the expired approval");

    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, h.keys.approver);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({
      name: "tenor_console",
      httpOnly: true,
      sameSite: "Strict",
      path: "/console",
    });
    await expect.poll(() => page.locator("[data-count=waiting]").textContent()).toBe("1");
    expect(await page.locator("[data-count=failed]").textContent()).toBe("1");
    expect(await page.getByRole("link", { name: waiting }).count()).toBe(1);
    expect(await page.getByRole("link", { name: failed }).count()).toBe(1);
    await screenshot(page, "list");

    // Filters work like the API's. A fresh load first: the list reloads itself every 5 s.
    await visit(page, `${h.base}/console`);
    await page.selectOption("#status", "failed");
    await Promise.all([page.waitForURL(/status=failed/), page.click("text=Filter")]);
    expect(await page.getByRole("link", { name: waiting }).count()).toBe(0);
    expect(await page.getByRole("link", { name: failed }).count()).toBe(1);

    await visit(page, `${h.base}/console/executions/${failed}`);
    const failure = page.getByRole("region", { name: "Failure" });
    expect(await failure.textContent()).toContain("Failure: APPROVAL_EXPIRED");
    expect(await failure.textContent()).toContain("no approval for LATE within 1s");
    expect(await failure.textContent()).toContain(
      "Not retryable. Permanent: the same request fails the same way.",
    );
    await screenshot(page, "failed");

    await visit(page, `${h.base}/console/executions/${waiting}`);
    expect(await page.getByRole("region", { name: "Waiting for" }).textContent()).toMatch(
      /approval issue until \d{4}-/,
    );
    const approvals = page.getByRole("region", { name: "Approvals" });
    expect(await approvals.textContent()).toContain('"symbol": "WEB"');
    const hash = await page.locator("[data-params-hash]").textContent();
    const api = await h.call("operator", "GET", `/v1/executions/${waiting}/approvals`);
    expect(hash).toBe(api.body.pending[0].paramsHash);
    expect(await page.getByRole("region", { name: "Journal" }).textContent()).toContain("feed.deploy");
    await screenshot(page, "waiting");

    // A form post without the session's CSRF proof is refused.
    const forged = await context.request.post(`${h.base}/console/executions/${waiting}/cancel`, {
      form: { csrf: "x" },
    });
    expect(forged.status()).toBe(403);

    await Promise.all([
      page.waitForURL(/notice=voted/),
      page.getByRole("button", { name: "Approve" }).click(),
    ]);
    expect(await page.getByRole("status").textContent()).toBe("Your vote was recorded.");
    await h.waitFor(waiting, (e) => e.status === "completed", "completion after the approval from the page");
    await page.reload();
    expect(await page.locator(".status").first().textContent()).toBe("completed");
    expect(await approvals.textContent()).toContain("approver (approver, approver)");
    expect(await page.getByRole("region", { name: "Parent and children" }).textContent()).toContain(
      "demo.provision-wallet",
    );
    await context.close();
  }, 200_000);

  it("shows why a run is held and lets an operator resume it now", async () => {
    const { id, turn } = await startHeldRun(h);
    const heldTurn = await turn();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, h.keys.operator);
    await visit(page, `${h.base}/console/executions/${id}`);
    const held = page.getByRole("region", { name: "Held" });
    expect(await held.textContent()).toContain("Held: WORKFLOW_VERSION_UNAVAILABLE");
    expect(await held.textContent()).toContain("version 99 is not registered on this runner");
    // What to do, in words: the version that is missing and the commands that end the hold.
    expect(await held.textContent()).toContain("tenor compat --against");
    expect(await held.textContent()).toContain(`tenor runs resume ${id}`);
    expect(await page.getByRole("region", { name: "Waiting for" }).textContent()).toBe(
      "Waiting forheld for a runner that registers demo.asset-issue version 99 (WORKFLOW_VERSION_UNAVAILABLE)",
    );
    // Times name their zone; the exact instant is the element's datetime.
    const wakes = page.locator("tr", { hasText: "Wakes at" }).locator("time");
    expect(await wakes.textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    expect(await wakes.getAttribute("datetime")).toBe((await h.waitFor(id, () => true, "read")).wakeAt);
    await screenshot(page, "held");
    await visit(page, `${h.base}/console?status=held`);
    expect(await page.locator("tbody").textContent()).toContain(id);
    await visit(page, `${h.base}/console/executions/${id}`);
    await Promise.all([
      page.waitForURL(/notice=resumed/),
      page.getByRole("button", { name: "Resume now" }).click(),
    ]);
    expect(await page.getByRole("status").textContent()).toBe("The run was woken and runs again now.");
    // Held runs retry after 60 s; resumed from the page, the runner takes another turn now.
    await eventually("a turn after the resume", async () => (await turn()) > heldTurn);

    await Promise.all([
      page.waitForURL(`${h.base}/console/sign-in`),
      page.getByRole("button", { name: "Sign out" }).click(),
    ]);
    await visit(page, `${h.base}/console`);
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    await context.close();
  }, 60_000);

  it("resets a held run from its page onto the newest version, and shows the reset in its Resets section", async () => {
    const { id } = await startHeldRun(h);
    // Held on version 99 with nothing journaled; the newest version decodes a demo run's input, not {}.
    const donor = await h.startDemo({ symbol: "RSTW", approvalTimeout: "10m", settle: "10ms" });
    await h.pool.query(
      "UPDATE executions SET input = (SELECT input FROM executions WHERE id = $2) WHERE id = $1",
      [id, donor],
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, h.keys.operator);
    await visit(page, `${h.base}/console/executions/${id}`);
    const form = page.getByRole("region", { name: "Reset", exact: true });
    expect(await form.textContent()).toContain("Reset onto the newest version");
    expect(await page.getByRole("region", { name: "Resets", exact: true }).count()).toBe(0);
    // The hold names no position: the form offers the journal's length, here 0.
    expect(await page.inputValue("#reset-position")).toBe("0");
    await page.fill("#reset-position", "0");
    await page.fill("#reset-reason", "release 2 is out");
    await screenshot(page, "reset-form");
    await Promise.all([
      page.waitForURL(/notice=reset/),
      page.getByRole("button", { name: "Reset run" }).click(),
    ]);
    expect(await page.getByRole("status").textContent()).toContain(
      "The run was reset onto the newest version",
    );
    const moved = await h.waitFor(
      id,
      (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval",
      "the reset run on the newest version, up to its approval",
    );
    expect(moved.workflowVersion).toBeLessThan(99);
    await visit(page, `${h.base}/console/executions/${id}`);
    const resets = page.getByRole("region", { name: "Resets", exact: true });
    expect(await resets.textContent()).toContain(
      `Reset at position 0, version 99 → ${moved.workflowVersion}`,
    );
    expect(await resets.textContent()).toContain("release 2 is out");
    expect(await resets.textContent()).toMatch(/operator \(key [^,]+, operator\)/);
    // A waiting run is not offered the form.
    expect(await page.getByRole("region", { name: "Reset", exact: true }).count()).toBe(0);
    await screenshot(page, "reset");
    await context.close();
  }, 90_000);

  it("shows no vote buttons to roles that may not approve, signals and cancels for an integrator, and keeps platform keys off executions", async () => {
    const id = await h.startDemo({ symbol: "ROLE", approvalTimeout: "10m", settle: "10ms" });
    await h.waitFor(
      id,
      (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval",
      "the approval wait",
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, h.keys.integrator);
    await visit(page, `${h.base}/console/executions/${id}`);
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
    expect(await page.getByRole("region", { name: "Approvals" }).textContent()).toContain(
      "Only approvers may vote.",
    );
    // An integrator may signal and cancel from the page.
    await page.fill("#signal-name", "note");
    await page.fill("#signal-payload", '{"from":"console"}');
    await Promise.all([
      page.waitForURL(/notice=signalled/),
      page.getByRole("button", { name: "Send signal" }).click(),
    ]);
    const stored = await h.pool.query(
      "SELECT payload FROM signals WHERE execution_id = $1 AND name = 'note'",
      [id],
    );
    expect(stored.rows[0].payload).toEqual({ from: "console" });
    await page.fill("#signal-name", "note");
    await page.fill("#signal-payload", "{not json");
    await page.getByRole("button", { name: "Send signal" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("REQUEST_INVALID");
    await page.fill("#cancel-reason", "wrong symbol");
    await Promise.all([
      page.waitForURL(/notice=cancelled/),
      page.getByRole("button", { name: "Cancel run" }).click(),
    ]);
    const failed = await h.waitFor(
      id,
      (e) => e.status === "failed" && e.failure.code === "CANCELLED",
      "cancelled from the page",
    );
    expect(failed.cancellation).toMatchObject({ by: { subject: "integrator" }, reason: "wrong symbol" });
    await visit(page, `${h.base}/console/executions/${id}`);
    const status = await page.locator("section", { hasText: "Cancelled by" }).first().textContent();
    expect(status).toMatch(/Cancelled byintegrator \(key [^,]+, integrator\)/);
    expect(status).toContain("Reasonwrong symbol");
    expect(await page.getByRole("region", { name: "Failure" }).textContent()).toContain(
      "Cancelled on request by integrator",
    );
    await screenshot(page, "cancelled");

    const platform = await issueApiKey(new PgApiKeys(h.pool), {
      orgId: null,
      role: "platform-admin",
      subject: "ops",
    });
    // A platform key signs in to the platform's pages and is sent back there from an execution's.
    const other = await browser.newContext();
    const signInPage = await other.newPage();
    await signInPage.goto(`${h.base}/console/sign-in`);
    await signInPage.fill("#key", platform.key);
    await Promise.all([
      signInPage.waitForURL(`${h.base}/console/schedules`),
      signInPage.click("button[type=submit]"),
    ]);
    await visit(signInPage, `${h.base}/console/executions/${id}`);
    expect(new URL(signInPage.url()).pathname).toBe("/console/schedules");
    expect(await signInPage.content()).not.toContain(id);
    await Promise.all([context.close(), other.close()]);
  }, 60_000);
});

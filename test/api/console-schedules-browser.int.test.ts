import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { eventually } from "../support/role-process.js";
import { type ConsoleBrowser, launchConsoleBrowser } from "./support/console-browser.js";

/**
 * The console's schedules page as platform people use it: Debian's chromium, headless, driven by
 * playwright-core against the real api role, with the real runner running what is triggered.
 * Screenshots go to a `tenor-console-schedules-*` folder under the system's temporary directory.
 */
let h: RolesHarness;
let b: ConsoleBrowser;

beforeAll(async () => {
  // Chromium's screenshots starve the api on a small machine: a button's post must not meet a 503.
  h = await startRolesHarness(import.meta.url, { shedOnEventLoopLag: false });
  b = await launchConsoleBrowser(h.base, "schedules");
}, 200_000);

afterAll(async () => {
  await b?.close();
  await h?.stop();
});

const row = (page: Page, schedule: string) => page.locator(`tr[data-schedule="${schedule}"]`);

async function pausedBy(schedule: string): Promise<string | null> {
  const { rows } = await h.pool.query<{ paused_by: string | null }>(
    "SELECT paused_by FROM schedules WHERE name = $1",
    [schedule],
  );
  return rows[0]?.paused_by ?? null;
}

describe("the schedules page in a browser", () => {
  it("a platform-admin sees cadence and next run, pauses, triggers and resumes from the page, audited", async () => {
    await eventually("the runner registered its schedules", async () => {
      const { rows } = await h.pool.query("SELECT 1 FROM schedules WHERE name = 'retention'");
      return rows.length === 1;
    });
    const page = await b.signIn(h.keys.platformAdmin, "/console/schedules");
    expect(await page.locator("header .who").textContent()).toContain("platform-admin, platform");
    const retention = row(page, "retention");
    expect(await retention.textContent()).toContain("daily at 03:17 UTC");
    expect(await retention.textContent()).toMatch(/\d{4}-\d\d-\d\d 03:17:00 UTC/);
    expect(await row(page, "execution-sweep").textContent()).toContain("every 500 ms");
    await b.screenshot(page, "schedules");

    await Promise.all([
      page.waitForURL(/notice=paused/),
      page.getByRole("button", { name: "Pause execution-sweep" }).click(),
    ]);
    expect(await page.getByRole("status").textContent()).toContain("The schedule is paused");
    expect(await row(page, "execution-sweep").textContent()).toContain("paused");
    expect(await row(page, "execution-sweep").textContent()).toContain("by platformAdmin");
    expect(await pausedBy("execution-sweep")).toBe("platformAdmin");
    // A paused schedule offers resume, not trigger.
    expect(await page.getByRole("button", { name: "Trigger now execution-sweep" }).count()).toBe(0);
    await b.screenshot(page, "schedules-paused");

    await Promise.all([
      page.waitForURL(/notice=triggered/),
      page.getByRole("button", { name: "Trigger now retention" }).click(),
    ]);
    expect(await page.getByRole("status").textContent()).toContain("A tick was queued");
    await eventually("the runner ran the triggered retention tick", async () => {
      const { rows } = await h.pool.query(
        "SELECT 1 FROM schedule_runs WHERE schedule = 'retention' AND triggered_by = 'platformAdmin' AND outcome <> 'running'",
      );
      return rows.length > 0;
    });
    await b.visit(page, `${h.base}/console/schedules`);
    expect(await retention.textContent()).toMatch(/empty|succeeded/);
    await b.screenshot(page, "schedules-triggered");

    await Promise.all([
      page.waitForURL(/notice=resumed/),
      page.getByRole("button", { name: "Resume execution-sweep" }).click(),
    ]);
    expect(await pausedBy("execution-sweep")).toBeNull();
    expect(await page.getByRole("button", { name: "Pause execution-sweep" }).count()).toBe(1);

    // The platform's pages never show an organisation's executions: its list sends them back.
    await b.visit(page, `${h.base}/console`);
    expect(new URL(page.url()).pathname).toBe("/console/schedules");

    const { rows } = await h.pool.query(
      "SELECT action, target, outcome, role FROM audit_events WHERE action LIKE 'schedule.%' ORDER BY id",
    );
    expect(rows).toEqual([
      { action: "schedule.pause", target: "execution-sweep", outcome: "accepted", role: "platform-admin" },
      { action: "schedule.trigger", target: "retention", outcome: "accepted", role: "platform-admin" },
      { action: "schedule.resume", target: "execution-sweep", outcome: "accepted", role: "platform-admin" },
    ]);
    await page.context().close();
  }, 120_000);

  it("a platform-operator reads the page without buttons and is refused a change; organisation keys are sent to their own pages", async () => {
    const page = await b.signIn(h.keys.platformOperator, "/console/schedules");
    expect(await page.getByRole("button", { name: /^(Pause|Resume|Trigger now) / }).count()).toBe(0);
    expect(await page.locator("main").textContent()).toContain(
      "Only platform-admin may pause, resume or trigger.",
    );
    await b.screenshot(page, "schedules-read-only");
    // A post made by hand, with the session's own CSRF token (the sign-out form carries it).
    const csrf = await page.locator("input[name=csrf]").first().inputValue();
    const forged = await page.context().request.post(`${h.base}/console/schedules/retention/pause`, {
      form: { csrf },
      headers: { origin: h.base },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain("FORBIDDEN");
    expect(await pausedBy("retention")).toBeNull();
    // The audit row is written once the response has finished (src/api/audit/audit-trail.ts), so it
    // may land just after the client has the 403.
    let rows: unknown[] = [];
    await eventually("the refusal audited", async () => {
      rows = (
        await h.pool.query(
          "SELECT outcome, role FROM audit_events WHERE action = 'schedule.pause' AND target = 'retention'",
        )
      ).rows;
      return rows.length > 0;
    });
    expect(rows).toEqual([{ outcome: "FORBIDDEN", role: "platform-operator" }]);

    const orgPage = await b.signIn(h.keys.operator, "/console");
    await b.visit(orgPage, `${h.base}/console/schedules`);
    expect(new URL(orgPage.url()).pathname).toBe("/console");
    await Promise.all([page.context().close(), orgPage.context().close()]);
  }, 60_000);
});

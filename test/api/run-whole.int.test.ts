import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalHash } from "../../src/engine/canonical-json.js";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { runTenor } from "../cli/support/run-cli.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/**
 * A run seen whole (docs/console.md, "A run seen whole"): its input, output, family, signals with
 * their senders, votes and audit entries through the activity resource, `tenor runs get/steps` and
 * the console's page, against the real api and runner roles; payloads only for the roles that may
 * read them, a timer's real length, an approval under its declared name.
 */
const CHROMIUM = "/usr/bin/chromium";
const SETTLE_MS = 2000;

let h: RolesHarness;
let browser: Browser;
let parent: string;
let child: string;
const shots = mkdtempSync(path.join(tmpdir(), "tenor-run-whole-"));

beforeAll(async () => {
  h = await startRolesHarness(import.meta.url);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
  // One whole run: a signal from the integrator, an approval, a 2 s sleep and a child.
  parent = await h.startDemo({ symbol: "WHOLE", approvalTimeout: "10m", settle: `${SETTLE_MS / 1000}s` });
  await h.waitFor(parent, (e) => e.waitingFor[0]?.kind === "approval", "the approval wait");
  const signal = await h.call("integrator", "POST", `/v1/executions/${parent}/signals/note`, { from: "ops" });
  expect(signal.status).toBe(202);
  // The signal wakes the run; it parks on the approval again.
  await h.waitFor(parent, (e) => e.status === "waiting", "the approval wait after the signal");
  const approval = (await h.call("approver", "GET", `/v1/executions/${parent}/approvals`)).body.pending[0];
  const vote = await h.call("approver", "POST", `/v1/executions/${parent}/approvals/issue`, {
    decision: "approve",
    paramsHash: approval.paramsHash,
  });
  expect(vote.status).toBe(202);
  await h.waitFor(parent, (e) => e.status === "completed", "completion");
  const activity = (await h.call("operator", "GET", `/v1/executions/${parent}/activity`)).body;
  child = activity.children.items[0].id;
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await killAllProcesses();
  await h?.stop();
});

const activityAs = async (person: "integrator" | "approver" | "operator", id: string): Promise<Json> => {
  const answer = await h.call(person, "GET", `/v1/executions/${id}/activity`);
  expect(answer.status).toBe(200);
  return answer.body;
};

describe("the activity resource", () => {
  it("shows an operator the input, output, child, every signal with its sender, the vote and the audit entries", async () => {
    const a = await activityAs("operator", parent);
    expect(a.payloadsIncluded).toBe(true);
    expect(a.input.value).toMatchObject({ symbol: "WHOLE", settle: "2s" });
    expect(a.input.sha256).toBe(canonicalHash(a.input.value));
    const run = (await h.call("operator", "GET", `/v1/executions/${parent}`)).body;
    expect(a.output.value).toEqual(run.result);
    expect(run.links.activity).toBe(`/v1/executions/${parent}/activity`);
    expect(a.children).toEqual({
      items: [
        { id: child, workflow: "demo.provision-wallet", status: "completed", createdAt: expect.any(String) },
      ],
      more: null,
    });
    expect(a.parent).toBeNull();
    const note = a.signals.find((s: Json) => s.name === "note");
    expect(note).toMatchObject({
      kind: "signal",
      sentBy: { name: "integrator", subject: "integrator", role: "integrator" },
      payload: { value: { from: "ops" } },
    });
    const decision = a.signals.find((s: Json) => s.kind === "approval");
    expect(decision).toMatchObject({ name: "issue", sentBy: null, payload: { value: { approved: true } } });
    expect(a.votes).toEqual([
      expect.objectContaining({
        approval: "issue",
        decision: "approve",
        approver: expect.objectContaining({ subject: "approver" }),
      }),
    ]);
    expect(a.auditIncluded).toBe(true);
    const actions = a.audit.map((e: Json) => `${e.action} ${e.subject}`);
    expect(actions).toContain("execution.signal integrator");
    expect(actions).toContain("approval.vote approver");
  });

  it("gives integrators and approvers sizes and hashes instead of payloads, and no audit entries", async () => {
    const operator = await activityAs("operator", parent);
    for (const person of ["integrator", "approver"] as const) {
      const a = await activityAs(person, parent);
      expect(a.payloadsIncluded).toBe(false);
      expect(a.input).toEqual({ bytes: operator.input.bytes, sha256: operator.input.sha256 });
      expect(a.output).not.toHaveProperty("value");
      expect(a.signals.every((s: Json) => !("value" in s.payload))).toBe(true);
      expect(a.signals.find((s: Json) => s.name === "note").sentBy.subject).toBe("integrator");
      expect(a.auditIncluded).toBe(false);
      expect(a.audit).toEqual([]);
    }
  });

  it("links a child to its parent, and lists children under their parent or apart from top-level runs", async () => {
    const a = await activityAs("integrator", child);
    expect(a.parent).toMatchObject({ id: parent, workflow: "demo.asset-issue", status: "completed" });
    const top = (await h.call("operator", "GET", "/v1/executions?topLevel=true&limit=100")).body;
    const ids = top.items.map((e: Json) => e.id);
    expect(ids).toContain(parent);
    expect(ids).not.toContain(child);
    const all = (await h.call("operator", "GET", "/v1/executions?limit=100")).body.items.map(
      (e: Json) => e.id,
    );
    expect(all).toContain(child);
    const children = (await h.call("operator", "GET", `/v1/executions?parentId=${parent}`)).body;
    expect(children.items.map((e: Json) => e.id)).toEqual([child]);
  });

  it("the journal shows the sleep's real length and the approval under its declared name", async () => {
    const { steps } = (await h.call("integrator", "GET", `/v1/executions/${parent}/steps`)).body;
    const settle = steps.find((s: Json) => s.kind === "sleep");
    // The body goes past a timer only once it is due: its end is at least the sleep's length after its start.
    expect(settle.durationMs).toBeGreaterThanOrEqual(SETTLE_MS - 100);
    expect(Date.parse(settle.completedAt) - Date.parse(settle.startedAt)).toBe(settle.durationMs);
    const approval = steps.find((s: Json) => s.kind === "approval");
    expect(approval).toMatchObject({ name: "issue", state: "ok" });
    expect(JSON.stringify(steps)).not.toContain("$approval");
  });
});

describe("tenor runs get and steps", () => {
  const as = (person: "integrator" | "operator") => ({ ...h.env, TENOR_API_KEY: h.keys[person] });

  it("prints input and output (their size without payload access), children, signals and votes", async () => {
    const operator = await runTenor(["runs", "get", parent], as("operator"));
    expect(operator.code, operator.stderr).toBe(0);
    expect(operator.stdout).toMatch(/^input: \{.*"symbol":"WHOLE"/m);
    expect(operator.stdout).toMatch(/^output: \{.*"treasuryWallet"/m);
    expect(operator.stdout).toContain(`  - ${child} demo.provision-wallet completed`);
    expect(operator.stdout).toMatch(
      / {2}- note at \S+ by integrator \(key integrator, integrator\), not taken yet: \{"from":"ops"\}/,
    );
    expect(operator.stdout).toMatch(/ {2}- approval issue at \S+ by its votes, taken at position 2: /);
    expect(operator.stdout).toMatch(/ {2}- issue: approve by approver \(key approver\)/);

    const integrator = await runTenor(["runs", "get", parent], as("integrator"));
    expect(integrator.stdout).toMatch(
      /^input: \(\d+ bytes, sha256 [0-9a-f]{12}…; payloads for operator and admin\)/m,
    );
    expect(integrator.stdout).not.toContain('"from":"ops"');

    const ofChild = await runTenor(["runs", "get", child], as("integrator"));
    expect(ofChild.stdout).toContain(`parent run: ${parent} demo.asset-issue completed`);
  });

  it("prints the sleep's real duration and the approval by name", async () => {
    const steps = await runTenor(["runs", "steps", parent], as("integrator"));
    expect(steps.code, steps.stderr).toBe(0);
    const settle = steps.stdout.split("\n").find((l) => /\bsleep\b/.test(l)) ?? "";
    expect(settle).toMatch(/ [2-9]\.\d s /);
    expect(steps.stdout).toMatch(/\bapproval\s+issue\s+ok/);
    expect(steps.stdout).not.toContain("$approval");
  });
});

describe("the console's page of a run", () => {
  async function signIn(page: Page, key: string): Promise<void> {
    await waitUntil("the api ready", async () => (await fetch(`${h.base}/readyz`)).ok);
    await page.goto(`${h.base}/console`);
    await page.fill("#key", key);
    await Promise.all([page.waitForURL(`${h.base}/console`), page.click("button[type=submit]")]);
  }

  it("shows an operator whole payloads folded, signals with senders, family, audit and relative times", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, h.keys.operator);
    // Child runs are listed under their parent, not among the runs people started.
    expect(await page.getByRole("link", { name: parent }).count()).toBe(1);
    expect(await page.getByRole("link", { name: child }).count()).toBe(0);
    await page.check("input[name=children]");
    await Promise.all([page.waitForURL(/children=include/), page.click("text=Filter")]);
    expect(await page.getByRole("link", { name: child }).count()).toBe(1);

    await page.goto(`${h.base}/console/executions/${parent}`);
    const io = page.getByRole("region", { name: "Input and output" });
    expect(await io.locator("pre[data-payload]").first().isVisible()).toBe(false);
    await io.locator("summary").first().click();
    expect(await io.locator("pre[data-payload]").first().textContent()).toContain('"symbol": "WHOLE"');
    const signals = page.getByRole("region", { name: "Signals" });
    expect(await signals.textContent()).toContain("integrator (key integrator, integrator)");
    expect(await signals.textContent()).toContain("approval issue");
    expect(await page.getByRole("region", { name: "Parent and children" }).textContent()).toContain(child);
    expect(await page.getByRole("region", { name: "Audit" }).textContent()).toContain("execution.signal");
    expect(await page.locator(".ago").first().textContent()).toMatch(/\((just now|\d+ (s|min) ago)\)/);
    const journal = await page.getByRole("region", { name: "Journal" }).textContent();
    expect(journal).toMatch(/sleepsettleok\s*1\+[\d.]+ (ms|s)[2-9]\.\d s/);
    expect(journal).not.toContain("$approval");
    // A finished run does not reload itself.
    expect(await page.locator("meta[http-equiv=refresh]").count()).toBe(0);
    await page.screenshot({ path: path.join(shots, "run-whole-operator.png"), fullPage: true });
    expect(readFileSync(path.join(shots, "run-whole-operator.png")).length).toBeGreaterThan(1000);

    await page.goto(`${h.base}/console/executions/${child}`);
    expect(await page.locator("[data-parent]").textContent()).toContain(parent);
    await context.close();
  }, 120_000);

  it("shows an integrator sizes instead of payloads, and reloads a waiting run's page", async () => {
    const waiting = await h.startDemo({ symbol: "LIVE", approvalTimeout: "10m", settle: "10ms" });
    await h.waitFor(waiting, (e) => e.status === "waiting", "the approval wait");
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, h.keys.integrator);
    await page.goto(`${h.base}/console/executions/${waiting}`);
    expect(await page.locator("meta[http-equiv=refresh]").getAttribute("content")).toBe("10");
    const io = page.getByRole("region", { name: "Input and output" });
    expect(await io.locator("[data-payload-hidden]").textContent()).toMatch(
      /^\d+ bytes, sha256 [0-9a-f]{12}…$/,
    );
    expect(await io.locator("pre[data-payload]").count()).toBe(0);
    await page.screenshot({ path: path.join(shots, "run-whole-integrator.png"), fullPage: true });
    await context.close();
  }, 120_000);
});

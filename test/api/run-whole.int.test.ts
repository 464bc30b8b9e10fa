import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicKeyId, verifyEvidence } from "../../src/api/evidence/evidence-chain.js";
import { canonicalHash } from "../../src/engine/canonical-json.js";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { runTenor } from "../cli/support/run-cli.js";
import { killAllProcesses } from "../support/processes.js";
import { type ConsoleBrowser, launchConsoleBrowser } from "./support/console-browser.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/**
 * A run seen whole (docs/console.md, "A run seen whole"): its input, output, family, signals with
 * their senders, votes and audit entries through the activity resource, `tenor runs get/steps` and
 * the console's page, against the real api and runner roles; payloads only for the roles that may
 * read them, a timer's real length, an approval under its declared name; child runs listed under
 * their parent, not among the runs people started; the signed evidence export from the console.
 */
const SETTLE_MS = 2000;

let h: RolesHarness;
let cb: ConsoleBrowser;
let parent: string;
let child: string;

beforeAll(async () => {
  // Chromium and two roles on a small machine: this file tests the run seen whole, not admission.
  h = await startRolesHarness(import.meta.url, { shedOnEventLoopLag: false });
  cb = await launchConsoleBrowser(h.base, "run-whole");
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
  await cb?.close();
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

  it("links a child to its parent, and lists children under their parent, not among top-level runs", async () => {
    const a = await activityAs("integrator", child);
    expect(a.parent).toMatchObject({ id: parent, workflow: "demo.asset-issue", status: "completed" });
    const ids = async (query: string) => {
      const answer = await h.call("operator", "GET", `/v1/executions?${query}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body.items.map((e: Json) => e.id);
    };
    expect(await ids("limit=100")).toEqual([parent]);
    expect(await ids("includeChildren=false&limit=100")).toEqual([parent]);
    expect(await ids("includeChildren=true&limit=100")).toEqual([child, parent]);
    expect(await ids(`parentId=${parent}`)).toEqual([child]);
    const bogus = await h.call("operator", "GET", "/v1/executions?includeChildren=yes");
    expect(bogus.status).toBe(400);
    expect(JSON.stringify(bogus.body.errors)).toContain("query.includeChildren");
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

  it("prints input and output (their size without payload access), children, signals, votes and audit entries", async () => {
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
    expect(operator.stdout).toMatch(/^audit:$/m);
    expect(operator.stdout).toMatch(
      / {2}- \S+ execution\.signal by integrator \(integrator\) on \S+: accepted$/m,
    );
    expect(operator.stdout).toMatch(/ {2}- \S+ approval\.vote by approver \(approver\) on \S+: accepted$/m);

    const integrator = await runTenor(["runs", "get", parent], as("integrator"));
    expect(integrator.stdout).toMatch(
      /^input: \(\d+ bytes, sha256 [0-9a-f]{12}…; payloads for operator and admin\)/m,
    );
    expect(integrator.stdout).not.toContain('"from":"ops"');
    expect(integrator.stdout).toContain("audit: (for operator and admin)\n");

    const ofChild = await runTenor(["runs", "get", child], as("integrator"));
    expect(ofChild.stdout).toContain(`parent run: ${parent} demo.asset-issue completed`);
  });

  it("lists top-level runs, children with --include-children or under --parent", async () => {
    const ids = async (...args: string[]) => {
      const run = await runTenor(["runs", "list", "--json", ...args], as("integrator"));
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout).items.map((e: Json) => e.id);
    };
    expect(await ids()).toEqual([parent]);
    expect(await ids("--include-children")).toEqual([child, parent]);
    expect(await ids("--parent", parent)).toEqual([child]);
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
  const count = (page: Page, status: string) => page.locator(`[data-count=${status}]`).textContent();

  it("lists top-level runs with counts of that list; children under their parent or when included", async () => {
    const page = await cb.signIn(h.keys.operator, "/console");
    // Child runs are listed under their parent, not among the runs people started, and the
    // counts are of the runs listed.
    expect(await page.getByRole("link", { name: parent }).count()).toBe(1);
    expect(await page.getByRole("link", { name: child }).count()).toBe(0);
    expect(await count(page, "completed")).toBe("1");
    await cb.screenshot(page, "run-whole-list-top-level");
    await page.check("input[name=includeChildren]");
    await Promise.all([page.waitForURL(/includeChildren=true/), page.click("text=Filter")]);
    expect(await page.getByRole("link", { name: child }).count()).toBe(1);
    expect(await count(page, "completed")).toBe("2");
    await cb.visit(page, `${h.base}/console?parentId=${parent}`);
    expect(await page.getByRole("link", { name: child }).count()).toBe(1);
    expect(await page.getByRole("link", { name: parent }).count()).toBe(1); // the "Child runs of" link
    expect(await count(page, "completed")).toBe("1");
    await cb.visit(page, `${h.base}/console?status=running`);
    expect(await count(page, "completed")).toBe("0");
    await page.context().close();
  }, 120_000);

  it("shows an operator whole payloads folded, signals with senders, family, audit and relative times", async () => {
    const page = await cb.signIn(h.keys.operator, "/console");
    await cb.visit(page, `${h.base}/console/executions/${parent}`);
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
    await cb.screenshot(page, "run-whole-operator");

    // The signed evidence export, from the page: verifiable, approvals by name, senders named.
    const link = page.getByRole("region", { name: "Evidence" }).getByRole("link");
    const download = await page.context().request.get(`${h.base}${await link.getAttribute("href")}`);
    expect(download.status()).toBe(200);
    expect(download.headers()["content-disposition"]).toContain(`evidence-${parent}.json`);
    const evidence = await download.json();
    expect(verifyEvidence(evidence, publicKeyId(h.evidencePublicKey))).toMatchObject({ ok: true });
    expect(evidence.format).toBe("tenor.evidence/2");
    expect(JSON.stringify(evidence)).not.toContain("$approval");
    const signal = evidence.records.find((r: Json) => r.type === "signal" && r.data.name === "note");
    expect(signal.data.sentBy).toMatchObject({ name: "integrator", role: "integrator" });
    // The audit row is written once the answer has left.
    const exports = async () =>
      (
        await h.pool.query(
          "SELECT subject, outcome FROM audit_events WHERE action = 'execution.evidence' AND target = $1",
          [parent],
        )
      ).rows;
    await expect.poll(exports).toContainEqual({ subject: "operator", outcome: "accepted" });

    await cb.visit(page, `${h.base}/console/executions/${child}`);
    expect(await page.locator("[data-parent]").textContent()).toContain(parent);
    await page.context().close();
  }, 120_000);

  it("shows an integrator sizes instead of payloads and no evidence, and reloads a waiting run's page", async () => {
    const waiting = await h.startDemo({ symbol: "LIVE", approvalTimeout: "10m", settle: "10ms" });
    await h.waitFor(waiting, (e) => e.status === "waiting", "the approval wait");
    const page = await cb.signIn(h.keys.integrator, "/console");
    await cb.visit(page, `${h.base}/console/executions/${waiting}`);
    expect(await page.locator("meta[http-equiv=refresh]").getAttribute("content")).toBe("10");
    const io = page.getByRole("region", { name: "Input and output" });
    expect(await io.locator("[data-payload-hidden]").textContent()).toMatch(
      /^\d+ bytes, sha256 [0-9a-f]{12}…$/,
    );
    expect(await io.locator("pre[data-payload]").count()).toBe(0);
    expect(await page.getByRole("region", { name: "Evidence" }).count()).toBe(0);
    await cb.screenshot(page, "run-whole-integrator");
    const refused = await page.context().request.get(`${h.base}/console/executions/${waiting}/evidence`);
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain("FORBIDDEN");
    await page.context().close();
  }, 120_000);
});

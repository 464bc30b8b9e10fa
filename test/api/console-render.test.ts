import { describe, expect, it } from "vitest";
import { executionBody } from "../../src/api/console/execution-page.js";
import { type Activity, payloadOf } from "../../src/api/executions/activity.js";
import { NonDeterminismError, toFailureRecord } from "../../src/engine/errors.js";
import type { ExecutionRecord } from "../../src/store/pg-execution-reads.js";

/** The execution page's HTML for cases the demo workflow never reaches: funding waits, hostile values. */

const record = (overrides: Partial<ExecutionRecord>): ExecutionRecord => ({
  id: "00000000-0000-4000-8000-000000000001",
  workflow: "chain.transaction",
  workflowVersion: 1,
  orgId: "acme",
  status: "waiting",
  waitingFor: [],
  wakeAt: null,
  progress: null,
  output: null,
  failure: null,
  hold: null,
  recoveryAttempts: 0,
  parentId: null,
  createdAt: "2026-11-30T00:00:00.000Z",
  updatedAt: "2026-11-30T00:00:00.000Z",
  completedAt: null,
  key: null,
  idempotencyKey: null,
  idempotencyExpiresAt: null,
  createdBy: null,
  cancelRequestedAt: null,
  cancelRequestedBy: null,
  cancelReason: null,
  paused: null,
  ...overrides,
});

const user = {
  principal: { keyId: "k", orgId: "acme", role: "approver" as const, name: "alice", subject: "alice" },
  csrf: "csrf-token",
};

const NOW = new Date("2026-12-01T10:08:17.000Z");

const activity = (overrides: Partial<Activity> = {}): Activity => ({
  executionId: "00000000-0000-4000-8000-000000000001",
  payloadsIncluded: false,
  input: payloadOf({ symbol: "ACME" }, false),
  output: null,
  parent: null,
  children: { items: [], more: null },
  signals: [],
  votes: [],
  auditIncluded: false,
  audit: [],
  ...overrides,
});

describe("execution page", () => {
  it("a held run reads in words: what does not replay, the commands that fix it, and times in UTC", () => {
    const hold = toFailureRecord(
      new NonDeterminismError(
        3,
        { kind: "step", name: "token.deploy" },
        { kind: "step", name: "token.mint" },
      ),
      "NON_DETERMINISM",
    );
    const id = "00000000-0000-4000-8000-000000000001";
    const page = executionBody(
      {
        record: record({
          status: "suspended",
          hold,
          wakeAt: "2026-12-01T10:05:17.250Z",
          waitingFor: [{ kind: "fix", name: "NON_DETERMINISM", details: { message: hold.message } }],
        }),
        journal: [],
        votes: [],
        user,
        activity: activity(),
        now: NOW,
      },
      null,
      null,
    ).text;
    expect(page).toContain("held for a deploy of code that replays journal position 3 (NON_DETERMINISM)");
    expect(page).not.toContain("fix NON_DETERMINISM");
    expect(page).toContain("tenor compat --against");
    expect(page).toContain(`tenor runs resume ${id}`);
    expect(page).not.toContain("start again");
    expect(page).toContain('<time datetime="2026-12-01T10:05:17.250Z">2026-12-01 10:05:17 UTC</time>');
  });

  it("a paused run reads who paused it, when and why, and offers operators Unpause instead of Pause", () => {
    const pause = {
      at: "2026-12-01T10:05:17.250Z",
      by: {
        keyId: "00000000-0000-4000-8000-00000000000a",
        name: "ops-laptop",
        subject: "carol",
        role: "operator",
      },
      reason: "checking the recipient",
    };
    const paused = record({
      paused: pause,
      waitingFor: [{ kind: "pause", name: "operator", details: { ...pause } }],
    });
    const operator = { ...user, principal: { ...user.principal, role: "operator" as const } };
    const page = (r: ExecutionRecord, u: Parameters<typeof executionBody>[0]["user"] = operator) =>
      executionBody(
        { record: r, journal: [], votes: [], user: u, activity: activity(), now: NOW },
        null,
        null,
      ).text;
    const text = page(paused);
    expect(text).toContain("<li>paused by carol: checking the recipient</li>");
    expect(text).toContain("<th>Paused by</th><td>carol (key ops-laptop, operator)</td>");
    expect(text).toContain("<th>Pause reason</th><td>checking the recipient</td>");
    expect(text).toContain('action="/console/executions/00000000-0000-4000-8000-000000000001/unpause"');
    expect(text).not.toContain('/pause"');
    const running = page(record({ status: "running" }));
    expect(running).toContain('action="/console/executions/00000000-0000-4000-8000-000000000001/pause"');
    expect(running).not.toContain("/unpause");
    // An approver may not pause: no form.
    expect(page(paused, user)).not.toContain("/unpause");
    expect(page(record({ status: "running" }), user)).not.toContain("/pause");
  });

  it("shows a funding request with its destination, amount and deadline", () => {
    const page = executionBody(
      {
        record: record({
          waitingFor: [
            {
              kind: "funding",
              name: "gas",
              until: "2026-12-01T00:00:00.000Z",
              details: { destination: "0xabc", required: "0.5 ETH" },
            },
          ],
        }),
        journal: [],
        votes: [],
        user,
        activity: activity(),
        now: NOW,
      },
      null,
      null,
    ).text;
    expect(page).toContain('aria-label="Funding requests"');
    expect(page).toContain("gas (deadline 2026-12-01T00:00:00.000Z)");
    expect(page).toContain("&quot;destination&quot;: &quot;0xabc&quot;");
    expect(page).toContain("&quot;required&quot;: &quot;0.5 ETH&quot;");
  });

  it("escapes every value it shows: approval parameters, failure messages, names", () => {
    const hostile = "<script>alert(1)</script>";
    const page = executionBody(
      {
        record: record({
          status: "waiting",
          waitingFor: [
            {
              kind: "approval",
              name: hostile,
              position: 0,
              details: { params: { memo: hostile }, paramsHash: "ab".repeat(32), quorum: 1 },
            },
          ],
          hold: { code: "NON_DETERMINISM", message: hostile, retryable: false, details: {} },
        }),
        journal: [],
        votes: [],
        user,
        activity: activity(),
        now: NOW,
      },
      { code: "X", message: hostile },
      null,
    ).text;
    expect(page).not.toContain("<script>");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toContain('name="csrf" value="csrf-token"');
  });
});

import { describe, expect, it } from "vitest";
import { executionBody } from "../../src/api/console/execution-page.js";
import { type Activity, payloadOf } from "../../src/api/executions/activity.js";
import { NonDeterminismError, toFailureRecord } from "../../src/engine/errors.js";
import type { ExecutionRecord } from "../../src/store/pg-execution-reads.js";
import type { ResetHistory } from "../../src/store/pg-reset.js";

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

  it("writes the run's times in the viewer's zone with the offset, and how long ago", () => {
    const page = executionBody(
      {
        record: record({
          status: "waiting",
          wakeAt: "2026-12-01T10:05:17.250Z",
          waitingFor: [{ kind: "timer", name: "settle", until: "2026-12-01T10:05:17.250Z" }],
        }),
        journal: [],
        votes: [],
        user,
        activity: activity(),
        now: NOW,
        zone: "Europe/Berlin",
      },
      null,
      null,
    ).text;
    expect(page).toContain(
      '<time datetime="2026-12-01T10:05:17.250Z">2026-12-01 11:05:17 UTC+01:00</time> <span class="ago">(2 min ago)</span>',
    );
    expect(page).toContain('<time datetime="2026-11-30T00:00:00.000Z">2026-11-30 01:00:00 UTC+01:00</time>');
    expect(page).toContain("timer settle until 2026-12-01 11:05:17 UTC+01:00");
    expect(page).not.toContain("10:05:17 UTC<");
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

  it("offers operators a reset form on a held or failed run, starting at the held position, and lists what each reset set aside", () => {
    const operator = { ...user, principal: { ...user.principal, role: "operator" as const } };
    const hold = toFailureRecord(
      new NonDeterminismError(2, { kind: "step", name: "b" }, { kind: "step", name: "b2" }),
      "NON_DETERMINISM",
    );
    const journal = Array.from({ length: 4 }, (_, position) => ({
      position,
      kind: "step",
      name: `s${position}`,
      state: "ok",
      attempts: 1,
      result: null,
      error: null,
      startedAt: "2026-11-30T00:00:00.000Z",
      completedAt: "2026-11-30T00:00:01.000Z",
    }));
    const page = (
      r: ExecutionRecord,
      u: Parameters<typeof executionBody>[0]["user"] = operator,
      resets: ResetHistory[] = [],
    ) =>
      executionBody(
        // biome-ignore lint/suspicious/noExplicitAny: journal views as the page reads them
        { record: r, journal: journal as any, votes: [], user: u, activity: activity(), now: NOW, resets },
        null,
        null,
      ).text;
    const held = page(record({ status: "suspended", hold }));
    expect(held).toContain('action="/console/executions/00000000-0000-4000-8000-000000000001/reset"');
    expect(held).toContain('name="position" type="number" min="0" max="4" value="2" required');
    expect(page(record({ status: "failed" }))).toContain('value="4" required');
    expect(page(record({ status: "waiting" }))).not.toContain("/reset");
    expect(page(record({ status: "suspended", hold }), user)).not.toContain("/reset");

    const withReset = executionBody(
      {
        record: record({ status: "running" }),
        journal: [],
        votes: [],
        user,
        activity: activity(),
        now: NOW,
        resets: [
          {
            id: "00000000-0000-4000-8000-0000000000f1",
            executionId: "00000000-0000-4000-8000-000000000001",
            position: 1,
            fromVersion: 1,
            toVersion: 2,
            fromStatus: "suspended",
            at: "2026-12-01T10:05:17.250Z",
            by: { keyId: "k", name: "ops-laptop", subject: "carol", role: "operator" },
            reason: "deploy 2",
            setAside: 2,
            signalsReturned: 1,
            entries: [
              {
                position: 1,
                kind: "signal",
                name: "go",
                state: "ok",
                result: null,
                error: null,
                completedAt: null,
              },
              {
                position: 2,
                kind: "step",
                name: "b",
                state: "ok",
                result: null,
                error: null,
                completedAt: null,
              },
            ],
          },
        ],
      },
      null,
      null,
    ).text;
    expect(withReset).toContain("<h3>Reset at position 1, version 1 → 2</h3>");
    expect(withReset).toContain("<th>By</th><td>carol (key ops-laptop, operator)</td>");
    expect(withReset).toContain("<th>Reason</th><td>deploy 2</td>");
    expect(withReset).toContain("Set aside (2 positions, 1 signals given back)");
    expect(withReset).toContain('<tr class="set-aside"><td>2</td><td>step</td><td>b</td><td>ok</td></tr>');

    // A reset from the journal's end set nothing aside: said in words, no empty table.
    const whole = page(record({ status: "running" }), user, [
      {
        id: "00000000-0000-4000-8000-0000000000f2",
        executionId: "00000000-0000-4000-8000-000000000001",
        position: 4,
        fromVersion: 1,
        toVersion: 2,
        fromStatus: "suspended",
        at: "2026-12-01T10:05:17.250Z",
        by: null,
        reason: "release 2",
        setAside: 0,
        signalsReturned: 0,
        entries: [],
      },
    ]);
    expect(whole).toContain("Nothing was set aside: the newest version replays the whole journal.");
    expect(whole).not.toContain('aria-label="Set aside by this reset"');
  });

  it("shows an approval's deadline as every other time: in the viewer's zone, with how long until it", () => {
    const page = executionBody(
      {
        record: record({
          waitingFor: [
            {
              kind: "approval",
              name: "issue",
              position: 1,
              until: "2026-12-01T12:08:17.000Z",
              details: { params: { amount: "5" }, paramsHash: "cd".repeat(32), quorum: 2 },
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
    expect(page).toContain(
      '<h3>issue (quorum 2, until <time datetime="2026-12-01T12:08:17.000Z">2026-12-01 12:08:17 UTC</time> <span class="ago">(in 2 h)</span>)</h3>',
    );
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
    expect(page).toContain(
      'gas (deadline <time datetime="2026-12-01T00:00:00.000Z">2026-12-01 00:00:00 UTC</time> <span class="ago">(10 h ago)</span>)',
    );
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

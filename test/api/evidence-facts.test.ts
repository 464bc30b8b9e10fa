import { describe, expect, it } from "vitest";
import { evidenceFacts } from "../../src/api/evidence/evidence-facts.js";
import type { JournalView } from "../../src/engine/execution-client.js";
import type { ExecutionRecord } from "../../src/store/pg-execution-reads.js";

/**
 * What the evidence export says about approvals and signals (docs/console.md, "Evidence export",
 * format 2): an approval under the name the workflow declared, never its reserved signal name,
 * and every delivered signal with its kind and sender.
 */

const record: ExecutionRecord = {
  id: "00000000-0000-4000-8000-000000000001",
  workflow: "demo.asset-issue",
  workflowVersion: 2,
  orgId: "acme",
  status: "completed",
  waitingFor: [],
  wakeAt: null,
  progress: null,
  output: {},
  failure: null,
  hold: null,
  recoveryAttempts: 0,
  parentId: null,
  createdAt: "2026-12-01T10:00:00.000Z",
  updatedAt: "2026-12-01T10:00:05.000Z",
  completedAt: "2026-12-01T10:00:05.000Z",
  key: null,
  idempotencyKey: null,
  idempotencyExpiresAt: null,
  createdBy: "integrator",
  cancelRequestedAt: null,
  cancelRequestedBy: null,
  cancelReason: null,
  paused: null,
};

const journal: JournalView[] = [
  {
    position: 0,
    kind: "signal",
    name: "note",
    state: "ok",
    result: { from: "ops" },
    error: null,
    attempts: 1,
    seq: 1,
    cause: 0,
    startedAt: "2026-12-01T10:00:01.000Z",
    completedAt: "2026-12-01T10:00:02.000Z",
  },
  {
    position: 1,
    kind: "signal",
    name: "$approval:issue",
    state: "ok",
    result: { approved: true },
    error: null,
    attempts: 1,
    seq: 2,
    cause: 1,
    startedAt: "2026-12-01T10:00:02.000Z",
    completedAt: "2026-12-01T10:00:04.000Z",
  },
];

const sender = { keyId: "k1", name: "integrator", subject: "ops@acme", role: "integrator" };

const facts = evidenceFacts({
  execution: record,
  input: { symbol: "X" },
  journal,
  votes: [],
  signals: [
    {
      name: "note",
      payload: { from: "ops" },
      idempotencyKey: null,
      sentBy: sender,
      consumedPosition: 0,
      consumedAt: "2026-12-01T10:00:02.000Z",
      createdAt: "2026-12-01T10:00:01.500Z",
    },
    {
      name: "$approval:issue",
      payload: { approved: true },
      idempotencyKey: "$approval:issue@1",
      sentBy: null,
      consumedPosition: 1,
      consumedAt: "2026-12-01T10:00:04.000Z",
      createdAt: "2026-12-01T10:00:03.500Z",
    },
  ],
  audit: [],
});

const ofType = (type: string) => facts.filter((f) => f.type === type).map((f) => f.data);

describe("evidence facts", () => {
  it("names an approval as the workflow declared it, in the journal, signals and transitions", () => {
    expect(JSON.stringify(facts)).not.toContain("$approval");
    expect(ofType("journal")[1]).toMatchObject({ position: 1, kind: "approval", name: "issue" });
    expect(ofType("journal")[0]).toMatchObject({ position: 0, kind: "signal", name: "note" });
    expect(ofType("transition")).toContainEqual({ status: "waiting", cause: "approval issue (position 1)" });
  });

  it("names each delivered signal's kind and sender; an approval's decision has none (its votes do)", () => {
    expect(ofType("signal")).toEqual([
      {
        kind: "signal",
        name: "note",
        sentBy: sender,
        payload: { from: "ops" },
        idempotencyKey: null,
        consumedPosition: 0,
        consumedAt: "2026-12-01T10:00:02.000Z",
        createdAt: "2026-12-01T10:00:01.500Z",
      },
      expect.objectContaining({ kind: "approval", name: "issue", sentBy: null, idempotencyKey: null }),
    ]);
  });
});

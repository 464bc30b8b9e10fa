import { describe, expect, it } from "vitest";
import {
  ACTIONS,
  FILTER_FIELDS,
  operationBodyOf,
  operationForm,
  PARAMETER_FIELDS,
} from "../../src/api/console/operation-form.js";
import {
  confirmSection,
  type OperationView,
  operationBody,
  operationsTable,
} from "../../src/api/console/operations-render.js";
import { TenorError } from "../../src/errors/tenor-error.js";
import { OPERATION_ACTIONS } from "../../src/store/pg-operations.js";

/** The console's operations pages, drawn from the API's resource and schemas (docs/console.md). */

const clock = { zone: "UTC", now: new Date("2026-12-02T10:03:00.000Z") };
const RUN = "00000000-0000-4000-8000-0000000000a1";

const operation = (overrides: Partial<OperationView> & Record<string, unknown> = {}): OperationView => ({
  id: "00000000-0000-4000-8000-000000000001",
  action: "cancel",
  filter: { workflow: "demo.steps", status: ["waiting", "held"] },
  reason: "wrong batch",
  signal: null,
  status: "running",
  total: 10,
  succeeded: 3,
  failed: 1,
  pending: 6,
  createdBy: { keyId: "k", name: "ops-laptop", subject: "carol", role: "operator" },
  abortRequestedBy: null,
  abortRequestedAt: null,
  createdAt: "2026-12-02T10:00:00.000Z",
  updatedAt: "2026-12-02T10:01:00.000Z",
  finishedAt: null,
  ...overrides,
});

const failure = {
  executionId: RUN,
  code: "EXECUTION_TERMINAL",
  message: "run is completed",
  at: "2026-12-02T10:01:00.000Z",
};

describe("the operations pages", () => {
  it("show an operation's action, filter, parameters, progress, who created it and per-run failures linking to runs", () => {
    const page = operationBody(
      operation(),
      { items: [failure], next: null },
      { clock, csrf: "t", mayAbort: true },
    ).text;
    expect(page).toContain("<td data-action>cancel</td>");
    expect(page).toContain("<code>workflow=demo.steps status=waiting,held</code>");
    expect(page).toContain("<code>reason: &quot;wrong batch&quot;</code>");
    expect(page).toMatch(/4 of 10 done: 3 succeeded,\s+1 failed, 6 pending/);
    expect(page).toContain('aria-valuenow="4"');
    expect(page).toContain("by carol (key ops-laptop)");
    expect(page).toContain("(3 min ago)");
    expect(page).toContain(`<a href="/console/executions/${RUN}">${RUN}</a>`);
    expect(page).toContain("<code>EXECUTION_TERMINAL</code>");
    expect(page).toContain('action="/console/operations/00000000-0000-4000-8000-000000000001/abort"');
  });

  it("render an action the page does not know from the resource's data, parameters included", () => {
    const page = operationBody(
      operation({ action: "reset-to-version", reason: null, target: { position: 3 } } as never),
      { items: [], next: null },
      { clock, csrf: "t", mayAbort: true },
    ).text;
    expect(page).toContain("<td data-action>reset-to-version</td>");
    expect(page).toContain("target: {&quot;position&quot;:3}");
    expect(page).not.toContain("reason:");
    expect(page).toContain("No run refused so far.");
  });

  it("offer the abort button only while running and only to roles that may", () => {
    const abort = (o: OperationView, mayAbort: boolean) =>
      operationBody(o, { items: [], next: null }, { clock, csrf: "t", mayAbort }).text.includes("/abort");
    expect(abort(operation(), true)).toBe(true);
    expect(abort(operation(), false)).toBe(false);
    expect(abort(operation({ status: "completed", finishedAt: "2026-12-02T10:02:00.000Z" }), true)).toBe(
      false,
    );
    const asked = {
      abortRequestedBy: { keyId: "k2", name: "lead", subject: "dave", role: "admin" },
      abortRequestedAt: "2026-12-02T10:02:00.000Z",
    };
    // Asked once: the runners stop it at their next pass; there is nothing more to ask.
    expect(abort(operation(asked), true)).toBe(false);
    expect(
      operationBody(operation(asked), { items: [], next: null }, { clock, csrf: "t", mayAbort: true }).text,
    ).toContain("a runner stops it at its next pass");
    const aborted = operationBody(
      operation({
        status: "aborted",
        abortRequestedBy: { keyId: "k2", name: "lead", subject: "dave", role: "admin" },
        abortRequestedAt: "2026-12-02T10:02:00.000Z",
      }),
      { items: [], next: null },
      { clock, csrf: "t", mayAbort: true },
    ).text;
    expect(aborted).toContain("by dave (key lead)");
  });

  it("list operations with status, progress and creator, and link each", () => {
    const table = operationsTable([operation()], clock).text;
    expect(table).toContain('href="/console/operations/00000000-0000-4000-8000-000000000001"');
    expect(table).toContain("4 of 10 (1 failed)");
    expect(table).toContain('<span class="status running">running</span>');
    expect(operationsTable([], clock).text).toContain("No operation yet.");
  });

  it("confirm a count by posting exactly the counted fields, and offer nothing to confirm for none or too many", () => {
    const fields = {
      action: "cancel",
      "filter.workflow": "demo.steps",
      "filter.status": ["waiting", "held"],
    };
    const count = { action: "cancel", filter: { workflow: "demo.steps" }, matched: 7, maxItems: 100 };
    const confirm = confirmSection(count, fields, "t").text;
    expect(confirm).toContain("<strong data-matched>7</strong> runs match");
    expect(confirm).toContain('<input type="hidden" name="filter.status" value="waiting">');
    expect(confirm).toContain('<input type="hidden" name="filter.status" value="held">');
    expect(confirm).toContain("Confirm: cancel 7 runs");
    expect(confirmSection({ ...count, matched: 0 }, fields, "t").text).not.toContain("Confirm");
    const tooMany = confirmSection({ ...count, matched: 101 }, fields, "t").text;
    expect(tooMany).not.toContain("Confirm");
    expect(tooMany).toContain("at most\n100");
  });
});

describe("the new-operation form", () => {
  it("asks for every action and filter field the API's schema has", () => {
    expect(ACTIONS).toEqual(OPERATION_ACTIONS);
    const form = operationForm("/console/operations/count", "t", {}).text;
    for (const action of OPERATION_ACTIONS) expect(form).toContain(`<option >${action}</option>`);
    for (const f of [...FILTER_FIELDS, ...PARAMETER_FIELDS]) expect(form).toContain(`name="${f.name}"`);
    expect(form).toContain('name="filter.status" value="held"');
    expect(PARAMETER_FIELDS.map((f) => f.field)).toEqual(expect.arrayContaining(["reason", "signal"]));
    // The bulk reset is offered as the API has it, with the reason it requires.
    expect(form).toContain("<option >reset-to-version</option>");
    expect(
      operationBodyOf({
        action: "reset-to-version",
        "filter.workflow": "demo.steps",
        "filter.version": "1",
        "filter.status": ["held"],
        "param.reason": "release 2",
        "param.signal": "",
      }),
    ).toEqual({
      action: "reset-to-version",
      filter: { workflow: "demo.steps", version: 1, status: ["held"] },
      reason: "release 2",
    });
  });

  it("reads the form into the API's body: numbers, checked statuses, JSON parameters; empty fields left out", () => {
    expect(
      operationBodyOf({
        action: "signal",
        "filter.workflow": "demo.steps",
        "filter.version": "2",
        "filter.status": ["waiting", "held"],
        "filter.key": "",
        "param.reason": "",
        "param.signal": '{"name":"note","payload":{"from":"ops"}}',
      }),
    ).toEqual({
      action: "signal",
      filter: { workflow: "demo.steps", version: 2, status: ["waiting", "held"] },
      signal: { name: "note", payload: { from: "ops" } },
    });
  });

  it("refuses what the API refuses, naming the field", () => {
    const refusal = (fields: Record<string, string | string[]>) => {
      try {
        operationBodyOf(fields);
      } catch (error) {
        expect(error).toBeInstanceOf(TenorError);
        return `${(error as TenorError).code} ${(error as TenorError).message}`;
      }
      throw new Error("accepted");
    };
    expect(refusal({ action: "signal", "filter.workflow": "x", "param.signal": "{nope" })).toMatch(
      /^REQUEST_INVALID .*body\.signal: must be JSON/,
    );
    expect(refusal({ action: "cancel", "filter.version": "two" })).toMatch(/body\.filter\.version/);
    expect(refusal({ action: "signal", "filter.workflow": "x" })).toContain(
      "body.signal: is required when action is signal",
    );
    expect(refusal({ action: "explode", "filter.workflow": "x" })).toContain("body.action");
    expect(refusal({ action: "reset-to-version", "filter.workflow": "x" })).toContain(
      "body.reason: is required when action is reset-to-version",
    );
  });
});

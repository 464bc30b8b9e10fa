import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/api/admin/bull-board.js";
import { generateApiKey, hashApiKey } from "../../src/api/auth/api-key.js";
import { roleMay } from "../../src/api/auth/permissions.js";
import { failureGuidance, holdGuidance, holdSummary } from "../../src/api/executions/guidance.js";
import { decodeCursor, encodeCursor } from "../../src/api/list-cursor.js";
import { parsePreferWait } from "../../src/api/prefer.js";
import { problemType, statusForCode, toProblem } from "../../src/api/problem.js";
import { toPgTimestamp } from "../../src/api/query-params.js";
import { hashApprovalParams } from "../../src/engine/approvals.js";
import { NonDeterminismError, toFailureRecord } from "../../src/engine/errors.js";
import { TenorError } from "../../src/errors/tenor-error.js";

describe("problem mapping", () => {
  it("maps stable codes to statuses and kebab-case type URIs", () => {
    expect(statusForCode("INPUT_INVALID")).toBe(422);
    expect(statusForCode("WORKFLOW_UNKNOWN")).toBe(404);
    expect(statusForCode("EXECUTION_NOT_FOUND")).toBe(404);
    expect(statusForCode("IDEMPOTENCY_KEY_REUSED")).toBe(422);
    expect(statusForCode("EXECUTION_TERMINAL")).toBe(409);
    expect(statusForCode("UNAUTHENTICATED")).toBe(401);
    expect(statusForCode("FORBIDDEN")).toBe(403);
    expect(statusForCode("APPROVAL_PARAMS_CHANGED")).toBe(409);
    expect(statusForCode("SOMETHING_NEW")).toBe(500);
    expect(problemType("IDEMPOTENCY_KEY_REUSED")).toBe("https://tenor.dev/problems/idempotency-key-reused");
  });

  it("turns engine issues into field errors and keeps other details", () => {
    const error = new TenorError("INPUT_INVALID", "bad", {
      details: {
        workflow: "w",
        issues: [
          { path: "a.b", message: "required" },
          { path: "", message: "object" },
        ],
      },
    });
    expect(toProblem(error, "/x")).toEqual({
      type: "https://tenor.dev/problems/input-invalid",
      title: "Unprocessable Content",
      status: 422,
      detail: "bad",
      instance: "/x",
      code: "INPUT_INVALID",
      retryable: false,
      errors: [
        { pointer: "body.a.b", message: "required" },
        { pointer: "body", message: "object" },
      ],
      details: { workflow: "w" },
    });
  });

  it("hides the message and stack of unexpected errors", () => {
    const problem = toProblem(new Error("connection to db-secret-host refused"), "/y");
    expect(problem).toMatchObject({ status: 500, code: "INTERNAL", retryable: true });
    expect(JSON.stringify(problem)).not.toContain("db-secret-host");
    expect(toProblem(new TenorError<string>("UNMAPPED_CODE", "internal detail"), "/z").detail).not.toContain(
      "internal detail",
    );
  });
});

describe("Prefer: wait", () => {
  it("parses wait among other preferences, case-insensitively, and caps it", () => {
    expect(parsePreferWait(undefined, 30)).toBeNull();
    expect(parsePreferWait("respond-async", 30)).toBeNull();
    expect(parsePreferWait("wait=10", 30)).toEqual({ requested: 10, applied: 10 });
    expect(parsePreferWait("respond-async, WAIT = 100", 30)).toEqual({ requested: 100, applied: 30 });
    expect(parsePreferWait(["return=minimal", 'wait="5"'], 30)).toEqual({ requested: 5, applied: 5 });
    expect(parsePreferWait("wait=0", 30)).toEqual({ requested: 0, applied: 0 });
    expect(parsePreferWait("wait=-1, wait=abc", 30)).toBeNull();
  });
});

describe("hashing", () => {
  it("API keys: prefixed, random, stored as SHA-256 hex", () => {
    const a = generateApiKey();
    expect(a).toMatch(/^tnr_[A-Za-z0-9_-]{43}$/);
    expect(generateApiKey()).not.toBe(a);
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hashApiKey("tnr_x")).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey("tnr_x")).not.toBe(hashApiKey("tnr_y"));
  });

  it("approval parameters: canonical JSON, so key order does not matter and any change does", () => {
    expect(hashApprovalParams({ a: 1, b: { c: "x", d: [1, 2] } })).toBe(
      hashApprovalParams({ b: { d: [1, 2], c: "x" }, a: 1 }),
    );
    expect(hashApprovalParams({ amount: "100" })).not.toBe(hashApprovalParams({ amount: "1000" }));
    expect(hashApprovalParams({ amount: "100" })).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("roles", () => {
  it("grants what the README says: queues are platform work, organisations' executions are not", () => {
    expect(roleMay("integrator", "start")).toBe(true);
    expect(roleMay("approver", "start")).toBe(false);
    expect(roleMay("approver", "approve")).toBe(true);
    expect(roleMay("integrator", "approve")).toBe(false);
    // Minting is the issuer's (and the admin's), not an integrator's; an issuer starts nothing else.
    expect(roleMay("issuer", "mint")).toBe(true);
    expect(roleMay("admin", "mint")).toBe(true);
    for (const role of ["integrator", "approver", "operator", "platform-admin"] as const)
      expect(roleMay(role, "mint")).toBe(false);
    expect(roleMay("issuer", "start")).toBe(false);
    expect(roleMay("issuer", "approve")).toBe(false);
    for (const role of ["integrator", "approver", "operator", "admin"] as const) {
      expect(roleMay(role, "queuesRead")).toBe(false);
      expect(roleMay(role, "queuesWrite")).toBe(false);
    }
    expect(roleMay("platform-operator", "queuesRead")).toBe(true);
    expect(roleMay("platform-operator", "queuesWrite")).toBe(false);
    expect(roleMay("platform-admin", "queuesWrite")).toBe(true);
    for (const role of ["platform-operator", "platform-admin"] as const) {
      for (const permission of [
        "start",
        "read",
        "readPayloads",
        "signal",
        "cancel",
        "approve",
        "auditRead",
      ] as const) {
        expect(roleMay(role, permission)).toBe(false);
      }
      expect(roleMay(role, "platformStatus")).toBe(true);
    }
    expect(roleMay("operator", "auditRead")).toBe(true);
    expect(roleMay("integrator", "auditRead")).toBe(false);
    expect(roleMay("integrator", "readPayloads")).toBe(false);
  });
});

describe("resources", () => {
  it("cursors round-trip and reject forgeries", () => {
    const cursor = encodeCursor({
      createdAt: "2026-01-01T00:00:00.123Z",
      id: "00000000-0000-4000-8000-000000000001",
    });
    expect(decodeCursor(cursor)).toEqual({
      createdAt: "2026-01-01T00:00:00.123Z",
      id: "00000000-0000-4000-8000-000000000001",
    });
    expect(decodeCursor("zz")).toBeNull();
    expect(decodeCursor(Buffer.from('["x","y"]').toString("base64url"))).toBeNull();
    const forged = (createdAt: string, id: string) =>
      decodeCursor(Buffer.from(JSON.stringify([createdAt, id])).toString("base64url"));
    expect(forged("1", "00000000-0000-4000-8000-000000000001")).toBeNull();
    expect(forged("0000-01-01T00:00:00.000Z", "00000000-0000-4000-8000-000000000001")).toBeNull();
    expect(forged("2026-01-01T00:00:00.123Z", "-".repeat(36))).toBeNull();
  });

  it("parses times to the range PostgreSQL accepts", () => {
    expect(toPgTimestamp("2026-01-01T01:00:00+01:00")).toBe("2026-01-01T00:00:00.000Z");
    expect(toPgTimestamp("0001-01-01T00:00:00Z")).toBe("0001-01-01T00:00:00.000Z");
    expect(toPgTimestamp("0000-12-31T23:59:59Z")).toBeNull();
    expect(toPgTimestamp("+010000-01-01T00:00:00Z")).toBeNull();
    expect(toPgTimestamp("not a date")).toBeNull();
  });

  it("gives retry guidance from the failure", () => {
    expect(failureGuidance({ code: "X", message: "", retryable: true, details: {} })).toMatch(/^Transient/);
    expect(failureGuidance({ code: "X", message: "", retryable: false, details: {} })).toMatch(/^Permanent/);
    expect(failureGuidance({ code: "CANCELLED", message: "", retryable: false, details: {} })).toMatch(
      /^Cancelled/,
    );
  });

  it("a hold's guidance names what does not replay and the commands that end it; a cancel names who and why", () => {
    const id = "5f0c5a8e-1111-4a4a-9b9b-000000000001";
    const nonDeterminism = toFailureRecord(
      new NonDeterminismError(
        3,
        { kind: "step", name: "token.deploy" },
        { kind: "step", name: "token.mint" },
      ),
      "NON_DETERMINISM",
    );
    const guidance = holdGuidance(id, nonDeterminism);
    expect(guidance).toMatch(/^Held, not failed/);
    expect(guidance).toContain("journal position 3");
    expect(guidance).toContain('step "token.deploy"');
    expect(guidance).toContain("tenor compat --against");
    expect(guidance).toContain(`tenor runs resume ${id}`);
    expect(guidance).toContain(`POST /v1/executions/${id}/resume`);
    expect(guidance).not.toMatch(/start(ing)? again/);
    expect(holdSummary(nonDeterminism)).toBe("a deploy of code that replays journal position 3");

    const version = {
      code: "WORKFLOW_VERSION_UNAVAILABLE",
      message: "m",
      retryable: false,
      details: { workflow: "demo.asset-issue", version: 99, registered: [1, 2] },
    };
    expect(holdGuidance(id, version)).toContain("demo.asset-issue version 99 (it had: 1, 2)");
    expect(holdGuidance(id, version)).toContain(`tenor runs resume ${id}`);
    expect(holdSummary(version)).toBe("a runner that registers demo.asset-issue version 99");

    const cancelled = {
      code: "CANCELLED",
      message: "m",
      retryable: false,
      details: { requestedBy: { subject: "alice@acme", name: "ops-laptop" }, reason: "wrong recipient" },
    };
    expect(failureGuidance(cancelled)).toBe(
      "Cancelled on request by alice@acme (key ops-laptop): wrong recipient. To run it again, start a new " +
        "execution with a new Idempotency-Key.",
    );
  });

  it("Bull Board job data is redacted for secrets at any depth", () => {
    expect(
      redactSecrets({
        executionId: "e",
        apiKey: "k",
        nested: [{ privateKey: "0x", amount: "1" }],
        Authorization: "b",
      }),
    ).toEqual({
      executionId: "e",
      apiKey: "[redacted]",
      nested: [{ privateKey: "[redacted]", amount: "1" }],
      Authorization: "[redacted]",
    });
  });
});

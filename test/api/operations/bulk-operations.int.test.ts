import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHeldRun } from "../../cli/support/held-run.js";
import { type RolesHarness, startRolesHarness } from "../../cli/support/roles-harness.js";
import { runTenor } from "../../cli/support/run-cli.js";
import { killAllProcesses, waitUntil } from "../../support/processes.js";

/**
 * Bulk operations by query through the real api and runner roles and the `tenor ops` CLI
 * (docs/console.md, "Bulk operations"): refusals, a dry run, per-run failures with codes, an
 * operation created while no runner lives and finished by the one started after, an abort, and
 * the audit trail.
 */
let h: RolesHarness;
const RUNS = 12;
let ids: string[] = [];

beforeAll(async () => {
  h = await startRolesHarness(import.meta.url, {
    shedOnEventLoopLag: false,
    operations: { batchSize: 5, intervalMs: 200 },
  });
  ids = await h.startDemosAwaitingApproval(Array.from({ length: RUNS }, (_, i) => `OPS${i}`));
}, 240_000);

afterAll(async () => {
  await killAllProcesses();
  await h?.stop();
});

const as = (person: "integrator" | "operator") => ({ ...h.env, TENOR_API_KEY: h.keys[person] });
// biome-ignore lint/suspicious/noExplicitAny: the API's JSON answers as they come.
type Json = any;

async function operationUntil(id: string, what: string, predicate: (o: Json) => boolean): Promise<Json> {
  return waitUntil(
    what,
    async () => {
      const res = await h.call("operator", "GET", `/v1/operations/${id}`);
      return predicate(res.body) ? res.body : false;
    },
    { timeoutMs: 120_000 },
  );
}

/** Waits until the audit trail holds every one of `expected`: a row is written once its answer has left. */
async function auditedAll(expected: readonly { action: string; target: string; outcome: string }[]) {
  await waitUntil("the audit rows of the operations", async () => {
    const { rows } = await h.pool.query<{ action: string; target: string; outcome: string }>(
      "SELECT action, target, outcome FROM audit_events WHERE action LIKE 'operation.%' ORDER BY id",
    );
    return expected.every((e) =>
      rows.some((r) => r.action === e.action && r.target === e.target && r.outcome === e.outcome),
    );
  });
}

describe("bulk operations", () => {
  it("refuses an empty filter, a signal without one, another role and an unknown id, naming what is wrong", async () => {
    const empty = await h.call("operator", "POST", "/v1/operations", { action: "cancel", filter: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe("OPERATION_FILTER_EMPTY");
    expect(empty.body.errors).toEqual([
      { pointer: "body.filter", message: expect.stringMatching(/at least one/) },
    ]);

    const noSignal = await h.call("operator", "POST", "/v1/operations", {
      action: "signal",
      filter: { workflow: "demo.asset-issue" },
    });
    expect(noSignal.status).toBe(400);
    expect(noSignal.body.errors).toContainEqual({
      pointer: "body.signal",
      message: "is required when action is signal",
    });

    const badStatus = await h.call("operator", "POST", "/v1/operations", {
      action: "cancel",
      filter: { status: ["sleeping"] },
    });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.errors[0].pointer).toBe("body.filter.status.0");

    const integrator = await h.call("integrator", "POST", "/v1/operations", {
      action: "cancel",
      filter: { workflow: "demo.asset-issue" },
    });
    expect(integrator.status).toBe(403);

    const unknown = await h.call("operator", "GET", "/v1/operations/00000000-0000-4000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("OPERATION_NOT_FOUND");
    await auditedAll([
      { action: "operation.create", target: "operations", outcome: "OPERATION_FILTER_EMPTY" },
      { action: "operation.create", target: "operations", outcome: "FORBIDDEN" },
    ]);
  });

  it("counts first, then lists each run the action is refused for with its code", async () => {
    const dry = await runTenor(
      [
        "ops",
        "create",
        "--action",
        "resume",
        "--workflow",
        "demo.asset-issue",
        "--status",
        "waiting",
        "--dry-run",
      ],
      as("operator"),
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`^${RUNS} runs match`));
    expect((await h.pool.query("SELECT 1 FROM operations")).rowCount).toBe(0);

    const created = await runTenor(
      [
        "ops",
        "create",
        "--action",
        "resume",
        "--workflow",
        "demo.asset-issue",
        "--status",
        "waiting",
        "--json",
      ],
      as("operator"),
    );
    expect(created.code, created.stderr).toBe(0);
    const operation = JSON.parse(created.stdout);
    expect(operation).toMatchObject({ action: "resume", status: "running", total: RUNS, pending: RUNS });

    const done = await operationUntil(
      operation.id,
      "the resume operation to end",
      (o) => o.status === "completed",
    );
    expect(done).toMatchObject({ succeeded: 0, failed: RUNS, pending: 0 });
    const failures = await runTenor(["ops", "failures", operation.id], as("operator"));
    expect(failures.code, failures.stderr).toBe(0);
    expect(failures.stdout.split("\n")[0]).toMatch(/^RUN\s+CODE\s+MESSAGE\s+AT/);
    for (const id of ids)
      expect(failures.stdout).toMatch(new RegExp(`${id}\\s+EXECUTION_NOT_SUSPENDED\\s+the run is waiting`));
    const get = await runTenor(["ops", "get", operation.id], as("operator"));
    expect(get.stdout).toMatch(/progress:\s+12 of 12 done: 0 succeeded, 12 failed, 0 pending/);
  }, 180_000);

  it("is created while no runner lives, finished by the runner started after, and an abort leaves its runs alone", async () => {
    await h.killRunner();
    const [half, rest] = [ids.slice(0, RUNS / 2), ids.slice(RUNS / 2)];
    const cutoff = (
      await h.pool.query<{ at: Date }>("SELECT created_at AS at FROM executions WHERE id = $1", [rest[0]])
    ).rows[0]?.at as Date;
    const cancel = await h.call("operator", "POST", "/v1/operations", {
      action: "cancel",
      filter: { workflow: "demo.asset-issue", createdBefore: cutoff.toISOString() },
      reason: "asset programme withdrawn",
    });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(201);
    expect(cancel.body.total).toBe(half.length);
    const signal = await h.call("operator", "POST", "/v1/operations", {
      action: "signal",
      filter: { workflow: "demo.asset-issue", createdAfter: cutoff.toISOString() },
      signal: { name: "note", payload: { bulk: true } },
    });
    expect(signal.status).toBe(201);
    expect(signal.body.total).toBe(rest.length);
    const abort = await runTenor(["ops", "abort", signal.body.id], as("operator"));
    expect(abort.code, abort.stderr).toBe(0);
    expect(abort.stdout).toMatch(/^abort asked/);

    await h.restartRunner();
    const cancelled = await operationUntil(
      cancel.body.id,
      "the cancel to end",
      (o) => o.status === "completed",
    );
    expect(cancelled).toMatchObject({ succeeded: half.length, failed: 0 });
    const aborted = await operationUntil(
      signal.body.id,
      "the signal to end aborted",
      (o) => o.status === "aborted",
    );
    expect(aborted).toMatchObject({ succeeded: 0, failed: 0, pending: rest.length });
    expect(aborted.abortRequestedBy.role).toBe("operator");

    for (const id of half) {
      const run = await h.waitFor(id, (e) => e.status === "failed", "the cancelled run to fail");
      expect(run.failure.code).toBe("CANCELLED");
      expect(run.cancellation).toMatchObject({
        reason: "asset programme withdrawn",
        by: { role: "operator" },
      });
    }
    for (const id of rest) {
      const run = (await h.call("operator", "GET", `/v1/executions/${id}`)).body;
      expect(run.status).toBe("waiting");
    }
    const notes = await h.pool.query("SELECT 1 FROM signals WHERE name = 'note'");
    expect(notes.rowCount).toBe(0);

    const abortAgain = await h.call("operator", "POST", `/v1/operations/${signal.body.id}/abort`);
    expect(abortAgain.status).toBe(409);
    expect(abortAgain.body.code).toBe("OPERATION_FINISHED");

    // The audit row is written once the answer has left: wait for the last one.
    const expected = [
      { action: "operation.create", target: cancel.body.id, outcome: "accepted" },
      { action: "operation.create", target: signal.body.id, outcome: "accepted" },
      { action: "operation.abort", target: signal.body.id, outcome: "accepted" },
      { action: "operation.abort", target: signal.body.id, outcome: "OPERATION_FINISHED" },
    ];
    await waitUntil("the audit rows of the operations", async () => {
      const { rows } = await h.pool.query<{ action: string; target: string; outcome: string }>(
        "SELECT action, target, outcome FROM audit_events WHERE action LIKE 'operation.%' ORDER BY id",
      );
      return expected.every((e) =>
        rows.some((r) => r.action === e.action && r.target === e.target && r.outcome === e.outcome),
      );
    });
    const list = await runTenor(["ops", "list"], as("operator"));
    expect(list.stdout.split("\n")[0]).toMatch(/^OPERATION\s+ACTION\s+STATUS\s+DONE/);
    expect(list.stdout).toContain(`${signal.body.id}  signal  aborted`);
  }, 240_000);

  it("pauses the runs a filter matches through the CLI and unpauses them through the API, listing the finished and the not paused with their codes", async () => {
    // The previous test cancelled the first half; the second half waits on its approval.
    const [cancelled, waiting] = [ids.slice(0, RUNS / 2), ids.slice(RUNS / 2)];
    const created = await runTenor(
      [
        "ops",
        "create",
        "--action",
        "pause",
        "--workflow",
        "demo.asset-issue",
        "--reason",
        "quarter end",
        "--json",
      ],
      as("operator"),
    );
    expect(created.code, created.stderr).toBe(0);
    const pause = JSON.parse(created.stdout);
    expect(pause).toMatchObject({ action: "pause", reason: "quarter end", total: RUNS });
    const paused = await operationUntil(pause.id, "the pause to end", (o) => o.status === "completed");
    expect(paused).toMatchObject({ succeeded: waiting.length, failed: cancelled.length });
    const pauseFailures = (await h.call("operator", "GET", `/v1/operations/${pause.id}/failures`)).body;
    expect(pauseFailures.items.map((f: Json) => [f.executionId, f.code]).sort()).toEqual(
      cancelled.map((id) => [id, "EXECUTION_TERMINAL"]).sort(),
    );
    // The pause takes effect: each run's next turn parks it on a wait of kind pause.
    for (const id of waiting) {
      const run = await h.waitFor(
        id,
        (e) => e.status === "waiting" && e.waitingFor.length === 1 && e.waitingFor[0]?.kind === "pause",
        "parked on the pause",
      );
      expect(run.pause).toMatchObject({ reason: "quarter end", by: { role: "operator" } });
    }

    // One run is unpaused by hand first: the operation finds it not paused.
    const [byHand, ...rest] = waiting as [string, ...string[]];
    expect((await h.call("operator", "POST", `/v1/executions/${byHand}/unpause`)).status).toBe(202);
    await h.waitFor(
      byHand,
      (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval",
      "the run unpaused by hand back on its approval wait",
    );
    const unpause = await h.call("operator", "POST", "/v1/operations", {
      action: "unpause",
      filter: { workflow: "demo.asset-issue", status: ["waiting"] },
    });
    expect(unpause.status, JSON.stringify(unpause.body)).toBe(201);
    expect(unpause.body.total).toBe(waiting.length);
    const unpaused = await operationUntil(
      unpause.body.id,
      "the unpause to end",
      (o) => o.status === "completed",
    );
    expect(unpaused).toMatchObject({ succeeded: rest.length, failed: 1 });
    const unpauseFailures = (await h.call("operator", "GET", `/v1/operations/${unpause.body.id}/failures`))
      .body;
    expect(unpauseFailures.items).toEqual([
      expect.objectContaining({ executionId: byHand, code: "EXECUTION_NOT_PAUSED" }),
    ]);
    // The unpause wakes each run: it waits on its approval again, its pause gone.
    for (const id of waiting) {
      const run = await h.waitFor(
        id,
        (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval" && e.pause === null,
        "back on the approval wait",
      );
      expect(run.waitingFor).toHaveLength(1);
    }
    await auditedAll([
      { action: "operation.create", target: pause.id, outcome: "accepted" },
      { action: "operation.create", target: unpause.body.id, outcome: "accepted" },
    ]);
  }, 240_000);

  it("resets by filter onto the newest version, requiring a reason, and lists a run the newest version cannot take with its code", async () => {
    const noReason = await h.call("operator", "POST", "/v1/operations", {
      action: "reset-to-version",
      filter: { workflow: "demo.asset-issue", status: ["held"] },
    });
    expect(noReason.status).toBe(400);
    expect(noReason.body.errors).toContainEqual({
      pointer: "body.reason",
      message: "is required when action is reset-to-version",
    });

    // Held on version 99, which no runner has; the newest version cannot decode its input ({}).
    const { id: held } = await startHeldRun(h);
    const created = await runTenor(
      [
        "ops",
        "create",
        "--action",
        "reset-to-version",
        "--workflow",
        "demo.asset-issue",
        "--version",
        "99",
        "--status",
        "held",
        "--reason",
        "release 2 is out",
        "--json",
      ],
      as("operator"),
    );
    expect(created.code, created.stderr).toBe(0);
    const operation = JSON.parse(created.stdout);
    expect(operation).toMatchObject({ action: "reset-to-version", reason: "release 2 is out", total: 1 });
    const done = await operationUntil(operation.id, "the reset to end", (o) => o.status === "completed");
    expect(done).toMatchObject({ succeeded: 0, failed: 1 });
    const failures = await runTenor(["ops", "failures", operation.id], as("operator"));
    expect(failures.stdout).toMatch(
      new RegExp(`${held}\\s+RESET_PREFIX_NOT_REPLAYABLE\\s+.*input no longer decodes`),
    );
    const run = (await h.call("operator", "GET", `/v1/executions/${held}`)).body;
    expect(run).toMatchObject({ workflowVersion: 99, resets: [] });
    await auditedAll([{ action: "operation.create", target: operation.id, outcome: "accepted" }]);
  }, 240_000);
});

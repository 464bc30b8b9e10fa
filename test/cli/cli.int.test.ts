import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicKeyId } from "../../src/api/evidence/evidence-chain.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { eventually } from "../support/role-process.js";
import { jobDelayed, startHeldRun } from "./support/held-run.js";
import { type RolesHarness, startRolesHarness } from "./support/roles-harness.js";
import { runTenor } from "./support/run-cli.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/**
 * The operator CLI as a real process (scripts/tenor.ts) against the real api and runner roles:
 * tables for people, JSON for scripts, exit codes 0 / 1 / 2.
 */
let h: RolesHarness;

beforeAll(async () => {
  h = await startRolesHarness(import.meta.url);
}, 200_000);

afterAll(async () => {
  await killAllProcesses();
  await h?.stop();
});

const as = (person: "integrator" | "approver" | "operator") => ({ ...h.env, TENOR_API_KEY: h.keys[person] });

describe("tenor runs", () => {
  /** The run the first test takes to completion; the evidence test exports it. */
  let finished: string | undefined;

  it("lists, shows what a run waits for, approves it by its parameters' hash, and shows the journal as a timeline", async () => {
    const id = await h.startDemo({ symbol: "CLI", approvalTimeout: "10m", settle: "10ms" });
    await h.waitFor(
      id,
      (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval",
      "the approval wait",
    );

    const get = await runTenor(["runs", "get", id], as("operator"));
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/status:\s+waiting/);
    expect(get.stdout).toMatch(/approval issue until \d{4}-/);
    expect(get.stdout).toMatch(/hash [0-9a-f]{64}/);

    const list = await runTenor(["runs", "list", "--status", "waiting", "--json"], as("operator"));
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).items.map((e: { id: string }) => e.id)).toContain(id);
    const table = await runTenor(["runs", "list", "--workflow", "demo.asset-issue"], as("operator"));
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+WORKFLOW\s+STATUS\s+WAITING FOR/);
    expect(table.stdout).toContain(`${id}  demo.asset-issue@2  waiting  approval issue until`);

    const signal = await runTenor(
      ["runs", "signal", id, "note", "--payload", '{"from":"cli"}'],
      as("operator"),
    );
    expect(signal.code, signal.stderr).toBe(0);
    expect(signal.stdout).toBe(`signal note delivered to ${id}\n`);
    const stored = await h.pool.query(
      "SELECT payload FROM signals WHERE execution_id = $1 AND name = 'note'",
      [id],
    );
    expect(stored.rows[0].payload).toEqual({ from: "cli" });

    const approve = await runTenor(["runs", "approve", id, "issue"], as("approver"));
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stderr).toContain('"symbol":"CLI"');
    // The answer names the voter: subject, key and when.
    expect(approve.stdout).toMatch(
      /^approve recorded: approved \(1 of 1\)\n {2}- approve by approver \(key approver\) at \d{4}-\d\d-\d\dT[\d:.]+Z\n$/,
    );
    await h.waitFor(id, (e) => e.status === "completed", "completion");

    const steps = await runTenor(["runs", "steps", id], as("operator"));
    expect(steps.code, steps.stderr).toBe(0);
    expect(steps.stdout.split("\n")[0]).toMatch(/^POS\s+KIND\s+NAME\s+STATE\s+ATTEMPTS\s+AT\s+DURATION/);
    expect(steps.stdout).toMatch(/0\s+step\s+feed\.deploy\s+ok\s+1\s+\+0 ms\s+\S+ m?s/);
    // A duration reads "312 ms", "4.1 s" or, on a slow machine, "1 min 8 s".
    expect(steps.stdout).toMatch(
      /approval\s+issue\s+ok\s+1\s+\+(\d+ min )?[\d.]+ m?s\s+(\d+ min )?[\d.]+ m?s/,
    );
    const json = await runTenor(["runs", "steps", id, "--json"], as("operator"));
    expect(JSON.parse(json.stdout).steps.map((s: { name: string }) => s.name)).toEqual(
      expect.arrayContaining(["feed.deploy", "token.deploy", "settle"]),
    );

    const cancel = await runTenor(["runs", "cancel", id], as("operator"));
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain("409 EXECUTION_TERMINAL");
    finished = id;
  }, 90_000);

  it("exports the signed evidence of a finished run for operators, and verifies it offline", async () => {
    const id = finished;
    if (id === undefined) throw new Error("the test before did not take its run to completion");
    // The auditor's export: signed, hash-chained, naming who approved which parameters.
    expect((await h.call("integrator", "GET", `/v1/executions/${id}/evidence`)).status).toBe(403);
    const refused = await runTenor(["runs", "evidence", id], as("integrator"));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("403 FORBIDDEN");
    const exported = await runTenor(["runs", "evidence", id], as("operator"));
    expect(exported.code, exported.stderr).toBe(0);
    const evidence = { body: JSON.parse(exported.stdout) };
    expect(evidence.body.format).toBe("tenor.evidence/2");
    // Approvals under their declared name, never the reserved signal; each signal names its sender.
    expect(exported.stdout).not.toContain("$approval");
    const data = (type: string) =>
      evidence.body.records.filter((r: { type: string }) => r.type === type).map((r: Json) => r.data);
    expect(data("journal")).toContainEqual(
      expect.objectContaining({ kind: "approval", name: "issue", state: "ok" }),
    );
    expect(data("signal")).toContainEqual(
      expect.objectContaining({
        kind: "signal",
        name: "note",
        payload: { from: "cli" },
        sentBy: expect.objectContaining({ name: "operator", subject: "operator", role: "operator" }),
      }),
    );
    expect(data("signal")).toContainEqual(
      expect.objectContaining({ kind: "approval", name: "issue", sentBy: null }),
    );
    const approval = evidence.body.records.find((r: { type: string }) => r.type === "approval");
    expect(approval.data).toMatchObject({
      name: "issue",
      decision: "approve",
      approver: { subject: "approver" },
    });
    expect(approval.data.paramsHash).toMatch(/^[0-9a-f]{64}$/);
    const transitions = evidence.body.records.filter((r: { type: string }) => r.type === "transition");
    expect(transitions.at(-1)).toMatchObject({ data: { status: "completed" } });
    const file = path.join(mkdtempSync(path.join(tmpdir(), "tenor-evidence-")), "evidence.json");
    writeFileSync(file, JSON.stringify(evidence.body));
    const keyId = publicKeyId(h.evidencePublicKey);
    const verified = await runTenor(["verify", file, "--key-id", keyId], {});
    expect(verified.code, verified.stdout).toBe(0);
    expect(verified.stdout).toBe(
      `ok: ${evidence.body.records.length} records, chain intact, signed by key ${keyId}\n`,
    );
    approval.data.approver.subject = "someone-else";
    writeFileSync(file, JSON.stringify(evidence.body));
    const tampered = await runTenor(["verify", file], {});
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain(`record ${approval.seq} (approval): hash does not match its content`);
  }, 90_000);

  it("resumes a held run now, for roles that may, and refuses a run that is not suspended", async () => {
    const { id, turn } = await startHeldRun(h);
    const heldTurn = await turn();
    const refused = await runTenor(["runs", "resume", id], as("integrator"));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("403 FORBIDDEN");

    const resumed = await runTenor(["runs", "resume", id, "--json"], as("operator"));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ executionId: id, held: true });
    // Held runs retry after 60 s; resumed, the runner takes another turn now.
    await eventually("a turn after the resume", async () => (await turn()) > heldTurn);

    const doctor = await runTenor(["doctor"], { ...h.env });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/workflow-registrations\s+FAIL\s+.*demo\.asset-issue@99 \(1\)/);
    expect(doctor.stdout).toMatch(/redis\.maxmemory-policy\s+OK/);
    expect(doctor.stdout).toMatch(/shard-count\s+OK\s+configured 64, recorded 64/);
    expect(doctor.stdout).toMatch(/migrations\s+OK/);

    await h.call("integrator", "POST", `/v1/executions/${id}/cancel`);
    await h.waitFor(id, (e) => e.status === "failed", "cancelled");
    const notSuspended = await runTenor(["runs", "resume", id], as("operator"));
    expect(notSuspended.code).toBe(1);
    expect(notSuspended.stderr).toContain("409 EXECUTION_NOT_SUSPENDED");
  }, 90_000);

  it("pauses and unpauses a run, for roles that may, audited, and refuses a finished run with a stable code", async () => {
    const { id, turn } = await startHeldRun(h);
    // The refusals through the API itself: each CLI process costs seconds on a loaded machine.
    const refused = await h.call("integrator", "POST", `/v1/executions/${id}/pause`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("FORBIDDEN");

    const heldTurn = await turn();
    const paused = await runTenor(["runs", "pause", id, "--reason", "checking the release"], as("operator"));
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(
      new RegExp(
        `^${id} paused at \\S+ by operator \\(key [^)]+\\): checking the release: it finishes its current step`,
      ),
    );
    // A held run's next turn parks it on the pause: waiting, its hold gone until the unpause.
    const view = await h.waitFor(
      id,
      (e) => e.status === "waiting" && e.waitingFor.length === 1 && e.waitingFor[0]?.kind === "pause",
      "parked on the pause",
    );
    expect(await turn()).toBeGreaterThan(heldTurn);
    expect(view.waitingFor[0].summary).toBe("paused by operator: checking the release");
    expect(view.pause).toMatchObject({
      by: { subject: "operator", role: "operator" },
      reason: "checking the release",
    });
    expect(view.hold).toBeNull();
    const get = await runTenor(["runs", "get", id], as("operator"));
    expect(get.stdout).toMatch(/status:\s+waiting/);
    expect(get.stdout).toContain("  - paused by operator: checking the release\n");

    const unpaused = await runTenor(["runs", "unpause", id, "--json"], as("operator"));
    expect(unpaused.code, unpaused.stderr).toBe(0);
    expect(JSON.parse(unpaused.stdout)).toMatchObject({
      executionId: id,
      pause: { reason: "checking the release" },
    });
    await h.waitFor(
      id,
      (e) => e.status === "suspended" && e.hold?.code === "WORKFLOW_VERSION_UNAVAILABLE" && e.pause === null,
      "held again",
    );
    const again = await h.call("operator", "POST", `/v1/executions/${id}/unpause`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "EXECUTION_NOT_PAUSED", status: 409 });

    // Each audit row lands once its response has finished.
    const audited = await waitUntil("the pause requests audited", async () => {
      const audit = await h.call("operator", "GET", `/v1/audit?target=${id}`);
      const rows = audit.body.items.map(
        (i: { action: string; outcome: string }) => `${i.action} ${i.outcome}`,
      );
      return rows.includes("execution.unpause EXECUTION_NOT_PAUSED") ? rows : false;
    });
    expect(audited).toEqual(
      expect.arrayContaining([
        "execution.pause FORBIDDEN",
        "execution.pause accepted",
        "execution.unpause accepted",
        "execution.unpause EXECUTION_NOT_PAUSED",
      ]),
    );

    await h.call("operator", "POST", `/v1/executions/${id}/cancel`);
    await h.waitFor(id, (e) => e.status === "failed", "cancelled");
    const finished = await runTenor(["runs", "pause", id], as("operator"));
    expect(finished.code).toBe(1);
    expect(finished.stderr).toContain("409 EXECUTION_TERMINAL");
    expect(finished.stderr).toContain("a finished run cannot be paused");
  }, 120_000); // four CLI processes, each several seconds of start-up on a loaded 2-core machine

  it("resets a held run onto the newest version, for roles that may, audited, and refuses with stable codes", async () => {
    const { id } = await startHeldRun(h);
    const refused = await h.call("integrator", "POST", `/v1/executions/${id}/reset`, {
      position: 0,
      reason: "x",
    });
    expect(refused.status).toBe(403);
    const range = await h.call("operator", "POST", `/v1/executions/${id}/reset`, {
      position: 5,
      reason: "x",
    });
    expect(range.status).toBe(422);
    expect(range.body).toMatchObject({ code: "RESET_POSITION_OUT_OF_RANGE", details: { max: 0 } });
    // Version 2 cannot take the run's input ({}): the dry replay refuses it, nothing changes.
    const notReplayable = await runTenor(
      ["runs", "reset", id, "--position", "0", "--reason", "release 2 is out"],
      as("operator"),
    );
    expect(notReplayable.code).toBe(1);
    expect(notReplayable.stderr).toContain("409 RESET_PREFIX_NOT_REPLAYABLE");
    expect(notReplayable.stderr).toContain("input no longer decodes");

    // Given an input version 2 decodes, the same reset moves it: it runs on version 2 up to its approval.
    const donor = await h.startDemo({ symbol: "RST", approvalTimeout: "10m", settle: "10ms" });
    await h.pool.query(
      "UPDATE executions SET input = (SELECT input FROM executions WHERE id = $2) WHERE id = $1",
      [id, donor],
    );
    const reset = await runTenor(
      [
        "runs",
        "reset",
        id,
        "--position",
        "0",
        "--reason",
        "release 2 is out",
        "--idempotency-key",
        "rst-1",
        "--json",
      ],
      as("operator"),
    );
    expect(reset.code, reset.stderr).toBe(0);
    const answer = JSON.parse(reset.stdout);
    expect(answer).toMatchObject({
      executionId: id,
      status: "running",
      duplicate: false,
      reset: {
        position: 0,
        fromVersion: 99,
        toVersion: 2,
        fromStatus: "suspended",
        reason: "release 2 is out",
      },
    });
    const view = await h.waitFor(
      id,
      (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval",
      "on version 2, at its approval",
    );
    expect(view.workflowVersion).toBe(2);
    expect(view.resets).toMatchObject([{ id: answer.reset.id, by: { subject: "operator" }, entries: [] }]);
    // The same Idempotency-Key answers the same reset, though the run now waits; it does not wake
    // the parked run (its job stays delayed until the approval's deadline), so it stays waiting.
    await eventually("the approval wait's job delayed", () => jobDelayed(h, id));
    const again = await fetch(`${h.base}/v1/executions/${id}/reset`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.keys.operator}`,
        "content-type": "application/json",
        "idempotency-key": "rst-1",
      },
      body: JSON.stringify({ position: 0, reason: "release 2 is out" }),
    });
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ duplicate: true, reset: { id: answer.reset.id } });
    expect(await jobDelayed(h, id)).toBe(true);
    const waiting = await h.call("operator", "POST", `/v1/executions/${id}/reset`, {
      position: 0,
      reason: "x",
    });
    expect(waiting.body).toMatchObject({
      code: "EXECUTION_NOT_RESETTABLE",
      status: 409,
      details: { status: "waiting" },
    });

    const audited = await waitUntil("the reset requests audited", async () => {
      const audit = await h.call("operator", "GET", `/v1/audit?target=${id}`);
      const rows = audit.body.items.map(
        (i: { action: string; outcome: string }) => `${i.action} ${i.outcome}`,
      );
      return rows.includes("execution.reset EXECUTION_NOT_RESETTABLE") ? rows : false;
    });
    expect(audited).toEqual(
      expect.arrayContaining([
        "execution.reset FORBIDDEN",
        "execution.reset RESET_POSITION_OUT_OF_RANGE",
        "execution.reset RESET_PREFIX_NOT_REPLAYABLE",
        "execution.reset accepted",
      ]),
    );
    const get = await runTenor(["runs", "get", id], as("operator"));
    expect(get.stdout).toMatch(
      /reset \S+ by operator \(key [^)]+\): release 2 is out\n {2}from position 0, version 99 → 2/,
    );
  }, 120_000);

  it("shows a hold in words, lists held and cancelled runs, and cancels with a reason that stays with the failure", async () => {
    const { id } = await startHeldRun(h);
    const get = await runTenor(["runs", "get", id], as("operator"));
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toContain(
      "held for a runner that registers demo.asset-issue version 99 (WORKFLOW_VERSION_UNAVAILABLE)",
    );
    expect(get.stdout).not.toContain("fix WORKFLOW_VERSION_UNAVAILABLE");
    expect(get.stdout).toMatch(/what to do: Held, not failed: .*tenor compat --against/);
    expect(get.stdout).toContain(`tenor runs resume ${id}`);

    const held = await runTenor(["runs", "list", "--status", "held", "--json"], as("operator"));
    expect(held.code, held.stderr).toBe(0);
    expect(JSON.parse(held.stdout).items.map((e: { id: string }) => e.id)).toContain(id);
    const bogus = await runTenor(["runs", "list", "--status", "sleeping"], as("operator"));
    expect(bogus.code).toBe(1);
    expect(bogus.stderr).toContain("400 REQUEST_INVALID");
    expect(bogus.stderr).toContain(
      "query.status: must be one or more of running, waiting, suspended, completed, failed, held",
    );

    const cancel = await runTenor(
      ["runs", "cancel", id, "--reason", "superseded by version 3"],
      as("operator"),
    );
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toMatch(
      new RegExp(
        `^cancellation of ${id} requested at \\S+ by operator \\(key [^)]+\\): superseded by version 3\\n$`,
      ),
    );
    await h.waitFor(id, (e) => e.status === "failed", "cancelled");
    const after = await runTenor(["runs", "get", id], as("operator"));
    expect(after.stdout).toMatch(/cancelled by:\s+operator \(key [^,]+, operator\)/);
    expect(after.stdout).toMatch(/cancel reason:\s+superseded by version 3/);
    expect(after.stdout).toMatch(/failure:\s+CANCELLED: execution \S+ was cancelled by operator/);
    const cancelled = await runTenor(
      ["runs", "list", "--status", "failed", "--code", "CANCELLED", "--json"],
      as("operator"),
    );
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout).items.map((e: { id: string }) => e.id)).toContain(id);

    // The auditor's export carries the cancellation with the failure: who and why.
    const evidence = await h.call("operator", "GET", `/v1/executions/${id}/evidence`);
    expect(evidence.status).toBe(200);
    const ended = evidence.body.records.filter((r: { type: string }) => r.type === "transition").at(-1);
    expect(ended.data).toMatchObject({
      status: "failed",
      failure: {
        code: "CANCELLED",
        details: { requestedBy: { subject: "operator" }, reason: "superseded by version 3" },
      },
    });
  }, 90_000);

  it("answers usage mistakes with exit code 2 and the usage, and a schedule table", async () => {
    const bogus = await runTenor(["runs", "get", "not-a-uuid"], as("operator"));
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('execution id "not-a-uuid" is not a UUID');
    expect(bogus.stderr).toContain("Usage:\n  tenor runs list");
    expect(bogus.stderr).not.toContain("tenor keys");
    const noUrl = await runTenor(["runs", "list"], { TENOR_API_KEY: h.keys.operator });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("TENOR_API_URL must be the api's base URL");
    const unknown = await runTenor(["runz"], {});
    expect(unknown.code).toBe(2);
    const missing = await runTenor(["runs", "get", randomUUID()], as("operator"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("404 EXECUTION_NOT_FOUND");
    const keys = await runTenor(["keys", "list", "--org", "demo"], { DATABASE_URL: h.db.url });
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stdout.trim().split("\n")).toHaveLength(3);
    const schedules = await runTenor(["schedules", "status"], as("operator"));
    expect(schedules.code, schedules.stderr).toBe(0);
    expect(schedules.stdout).toMatch(/^SCHEDULE\s+STATE\s+CADENCE\s+NEXT RUN/);
  }, 60_000);
});

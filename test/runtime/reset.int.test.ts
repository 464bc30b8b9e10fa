import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiDeps } from "../../src/api/api-deps.js";
import type { OrgPrincipal } from "../../src/api/auth/authenticate.js";
import { resetRun } from "../../src/api/executions/reset-route.js";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { PgExecutionCommands } from "../../src/store/pg-execution-commands.js";
import { readResets } from "../../src/store/pg-reset.js";
import { deployBuild } from "../fixtures/deploy-workflows.js";
import { FAULT_WORKFLOWS } from "../fixtures/fault-workflows.js";
import { killAllProcesses } from "../support/processes.js";
import { counts, createFaultWorld, type FaultWorld, waitsFor } from "./fault-harness.js";

/**
 * Reset with real runner processes (docs/engine.md, "Reset"): a run of the first build of
 * `fault.deploy` is held for non-determinism once a runner with a changed build takes it; reset
 * to a position the changed build replays, it completes on the newest version, without repeating
 * the side effects of the positions kept, and the positions set aside stay on record. The reset is
 * the API's own (`resetRun`), with the api's registry holding the changed build.
 */

let world: FaultWorld;
const ORG = "default";
const operator: OrgPrincipal = {
  keyId: "00000000-0000-4000-8000-00000000000a",
  orgId: ORG,
  name: "ops",
  subject: "alice",
  role: "operator",
};
let api: ApiDeps;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
  api = {
    commands: new PgExecutionCommands(world.db.pool),
    registry: new WorkflowRegistry([...FAULT_WORKFLOWS, ...deployBuild("changed")]),
    transport: { wake: (id: string) => world.queue.wake(id) },
  } as unknown as ApiDeps;
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

function reset(id: string, position: number, idempotencyKey: string | null = null, reason = "deploy 2") {
  return resetRun(api, operator, { id }, { position, reason, idempotencyKey });
}

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code: string; details: Record<string, unknown> }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e as { code: string; details: Record<string, unknown> },
  );
  if (!error) throw new Error("the reset was not refused");
  return { code: error.code, details: error.details };
}

const held = (v: ExecutionView) => v.status === "suspended" && v.hold?.code === "NON_DETERMINISM";

async function row(id: string) {
  const { rows } = await world.db.pool.query(
    "SELECT workflow_version, turn, status::text AS status FROM executions WHERE id = $1",
    [id],
  );
  return rows[0] as { workflow_version: number; turn: number; status: string };
}

/** A run of the first build parked on `more` (a, go, b done), then held by runner `name` of the changed build. */
async function heldRun(first: string, changed: string) {
  const a = await world.startRunner(first);
  const id = await world.start("fault.deploy", {});
  await world.waitForView(id, "waiting on go", (v) => waitsFor(v, "signal", "go"));
  await world.client.signal(id, "go", { value: "from-the-first-build" });
  await world.waitForView(id, "waiting on more", (v) => waitsFor(v, "signal", "more"));
  await a.kill();
  const b = await world.startRunner(changed, { env: { FAULT_DEPLOY: "changed" } });
  await world.queue.wake(id);
  const view = await world.waitForView(id, "held for non-determinism", held);
  expect(view.hold?.details).toMatchObject({ position: 2 });
  return { id, runner: b };
}

describe("reset", () => {
  it("moves a held run to the newest version from a position: it completes there, kept positions do not run again, the rest is set aside", async () => {
    const { id, runner } = await heldRun("A", "B");
    expect(counts(await world.sideEffects(id))).toEqual({ a: 1, b: 1 });

    // Position 3 keeps step b, which the changed build does not call: refused, naming position 2.
    const refused = await refusal(reset(id, 3));
    expect(refused.code).toBe("RESET_PREFIX_NOT_REPLAYABLE");
    expect(refused.details).toMatchObject({
      position: 2,
      recorded: { kind: "step", name: "b" },
      found: { kind: "step", name: "b2" },
      toVersion: 2,
    });
    expect(await row(id)).toMatchObject({ workflow_version: 1, status: "suspended" });
    expect((await refusal(reset(id, 5))).code).toBe("RESET_POSITION_OUT_OF_RANGE");

    // Position 1: the signal `go` consumed there is given back and consumed again by the new code.
    const done = await reset(id, 1, "reset-1");
    expect(done).toMatchObject({
      status: "running",
      duplicate: false,
      reset: {
        position: 1,
        fromVersion: 1,
        toVersion: 2,
        fromStatus: "suspended",
        setAside: 3,
        signalsReturned: 1,
      },
    });
    expect(done.reset.by).toMatchObject({ subject: "alice" });
    const completed = await world.waitForCompleted(id);
    expect(completed.output).toEqual({ value: "from-the-first-build", build: "changed" });
    expect(await row(id)).toMatchObject({ workflow_version: 2, status: "completed" });
    // a ran once (kept), b once (set aside, never again), b2 once on the new version.
    expect(counts(await world.sideEffects(id))).toEqual({ a: 1, b: 1, b2: 1 });
    expect((await world.journal(id)).map((e) => [e.position, e.name, e.state])).toEqual([
      [0, "a", "ok"],
      [1, "go", "ok"],
      [2, "b2", "ok"],
    ]);

    const [history] = await readResets(world.db.pool, ORG, id);
    expect(history?.entries.map((e) => [e.position, e.kind, e.name, e.state])).toEqual([
      [1, "signal", "go", "ok"],
      [2, "step", "b", "ok"],
      [3, "signal", "more", "pending"],
    ]);
    expect(history?.reason).toBe("deploy 2");

    // The same Idempotency-Key answers the same reset again; another body with it is refused.
    const again = await reset(id, 1, "reset-1");
    expect(again).toMatchObject({ duplicate: true, reset: { id: done.reset.id } });
    expect((await refusal(reset(id, 0, "reset-1"))).code).toBe("IDEMPOTENCY_KEY_REUSED");
    // Without the key, a finished run is refused and says what it is.
    const finished = await refusal(reset(id, 1));
    expect(finished).toMatchObject({ code: "EXECUTION_NOT_RESETTABLE", details: { status: "completed" } });
    await runner.kill();
  }, 120_000);

  it("refuses a run that waits, naming its status", async () => {
    const a = await world.startRunner("C");
    const waiting = await world.start("fault.deploy", {});
    await world.waitForView(waiting, "waiting on go", (v) => waitsFor(v, "signal", "go"));
    expect(await refusal(reset(waiting, 0))).toMatchObject({
      code: "EXECUTION_NOT_RESETTABLE",
      details: { status: "waiting" },
    });
    expect(await row(waiting)).toMatchObject({ workflow_version: 1, status: "waiting" });
    await a.kill();
  });

  it("survives a runner killed with SIGKILL right after the reset: the next runner completes it on the new version", async () => {
    const { id, runner } = await heldRun("D", "E");
    const turn = (await row(id)).turn;
    await reset(id, 2);
    runner.signal("SIGKILL");
    await runner.exit;
    // Nothing of the reset is lost with the runner: the next one takes the run on the new version.
    expect(await row(id)).toMatchObject({ workflow_version: 2 });
    expect((await row(id)).turn).toBeGreaterThan(turn);
    const f = await world.startRunner("F", { env: { FAULT_DEPLOY: "changed" } });
    const completed = await world.waitForCompleted(id);
    expect(completed.output).toEqual({ value: "from-the-first-build", build: "changed" });
    expect(counts(await world.sideEffects(id))).toEqual({ a: 1, b: 1, b2: 1 });
    expect((await world.journal(id)).map((e) => e.name)).toEqual(["a", "go", "b2"]);
    await f.kill();
  }, 120_000);
});

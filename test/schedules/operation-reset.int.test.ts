import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { resetToNewestVersion } from "../../src/schedules/operation-reset.js";
import { PgExecutionCommands } from "../../src/store/pg-execution-commands.js";
import { PgOperations } from "../../src/store/pg-operations.js";
import { readResets } from "../../src/store/pg-reset.js";
import { deployBuild } from "../fixtures/deploy-workflows.js";
import { FAULT_WORKFLOWS } from "../fixtures/fault-workflows.js";
import { counts, createFaultWorld, type FaultWorld, waitsFor } from "../runtime/fault-harness.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";

/**
 * A bulk `reset-to-version` worked by real runner processes (docs/engine.md, "Reset"): runs of the
 * first build of `fault.deploy` held for non-determinism by a runner of the changed build are
 * moved, by filter, onto its newest version from the first position it does not replay; each
 * completes there without repeating the steps kept. A run whose input the new version no longer
 * decodes is listed as a failure with the single reset's code, and an item whose reset committed
 * before its pass died is not reset a second time.
 */

let world: FaultWorld;
let operations: PgOperations;
const ORG = "default";
const ACTOR = { keyId: randomUUID(), name: "ops key", subject: "release@example.test", role: "operator" };
const changed = new WorkflowRegistry([...FAULT_WORKFLOWS, ...deployBuild("changed")]);

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
  operations = new PgOperations(world.db.pool);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

/** `count` runs of the first build parked on `more` (a, go, b done), then held by a runner of the changed build. */
async function heldRuns(count: number) {
  const first = await world.startRunner("first");
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await world.start("fault.deploy", {}));
  for (const [i, id] of ids.entries()) {
    await world.waitForView(id, "waiting on go", (v) => waitsFor(v, "signal", "go"));
    await world.client.signal(id, "go", { value: `run-${i}` });
  }
  for (const id of ids) await world.waitForView(id, "waiting on more", (v) => waitsFor(v, "signal", "more"));
  await first.kill();
  const runner = await world.startRunner("changed", { env: { FAULT_DEPLOY: "changed" } });
  for (const id of ids) await world.queue.wake(id);
  for (const id of ids) {
    await world.waitForView(
      id,
      "held for non-determinism",
      (v) => v.status === "suspended" && v.hold?.code === "NON_DETERMINISM",
    );
  }
  return { ids, runner };
}

async function resetRows(id: string) {
  const { rows } = await world.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM execution_resets WHERE execution_id = $1",
    [id],
  );
  return rows[0]?.n;
}

describe("bulk reset-to-version", () => {
  it("moves the held runs a filter selects onto the newest version from the last position it replays; a run it cannot take is a failure with its code; a retried item is not reset twice", async () => {
    const { ids, runner } = await heldRuns(4);
    await runner.kill();
    // A batch takes its items in execution-id order: the first is the one the crashed pass took.
    const [retried, , , undecodable] = [...ids].sort() as [string, string, string, string];
    // Version 2 of the changed build decodes only an object: this run's stored input no longer decodes.
    await world.db.pool.query(`UPDATE executions SET input = '"not an object"'::jsonb WHERE id = $1`, [
      undecodable,
    ]);

    const created = await operations.create({
      id: randomUUID(),
      orgId: ORG,
      action: "reset-to-version",
      filter: { workflow: "fault.deploy", version: 1, status: ["held"] },
      params: { reason: "release 2" },
      createdBy: ACTOR,
      maxItems: 100,
    });
    if (created.kind !== "created") throw new Error(`refused: ${created.matched} matched`);
    const operation = created.operation;
    expect(operation.total).toBe(4);

    // A pass that reset its first item and died before recording it: the item stays pending, attempted.
    const batch = await operations.takeBatch(operation.id, 1);
    expect(batch).toEqual([{ executionId: retried, attempted: false }]);
    const [target] = await operations.targets(
      ORG,
      batch.map((i) => i.executionId),
    );
    if (!target) throw new Error("no target");
    const deps = { commands: new PgExecutionCommands(world.db.pool), queue: world.queue, workflows: changed };
    expect(await resetToNewestVersion(deps, operation, target)).toEqual({
      executionId: target.id,
      outcome: "succeeded",
    });

    // The runner of the changed build takes the operation up on its schedule and works it to the end.
    const next = await world.startRunner("changed-2", { env: { FAULT_DEPLOY: "changed" } });
    const done = await waitUntil(
      "the operation to end",
      async () => {
        const now = await operations.get(ORG, operation.id);
        return now?.status === "completed" ? now : false;
      },
      { timeoutMs: 60_000 },
    );
    expect(done).toMatchObject({ total: 4, succeeded: 3, failed: 1 });
    const failures = await operations.failures(operation.id, 10);
    expect(failures).toEqual([
      {
        executionId: undecodable,
        code: "RESET_PREFIX_NOT_REPLAYABLE",
        message: expect.stringContaining("the run's input no longer decodes"),
        at: expect.any(String),
      },
    ]);

    for (const id of ids.filter((id) => id !== undecodable)) {
      const completed = await world.waitForCompleted(id);
      expect(completed.output).toEqual({ value: `run-${ids.indexOf(id)}`, build: "changed" });
      // a and go kept (a ran once), b and more set aside (b never again), b2 once on version 2.
      expect(counts(await world.sideEffects(id))).toEqual({ a: 1, b: 1, b2: 1 });
      expect((await world.journal(id)).map((e) => e.name)).toEqual(["a", "go", "b2"]);
      const resets = await readResets(world.db.pool, ORG, id);
      expect(resets).toHaveLength(1);
      expect(resets[0]).toMatchObject({
        position: 2,
        fromVersion: 1,
        toVersion: 2,
        setAside: 2,
        reason: "release 2",
        by: { subject: ACTOR.subject, role: "operator" },
      });
      // Held, as the filter asked: suspended on its hold, or running its hold's scheduled retry if
      // the new runner took that retry before the operation's pass reached the run.
      expect(["suspended", "running"]).toContain(resets[0]?.fromStatus);
    }
    expect(await resetRows(retried)).toBe(1);
    // The run refused is not moved (its hold's retry may since have failed it on the same input).
    expect((await world.view(undecodable)).workflowVersion).toBe(1);
    expect(await resetRows(undecodable)).toBe(0);
    await next.kill();
  }, 180_000);
});

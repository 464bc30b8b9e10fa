import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import type { TurnRunner } from "../../src/engine/turn-runner.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { newExecution } from "../support/new-execution.js";
import { directTurnRunner } from "../support/turn-runner.js";

/**
 * Version pinning (docs/engine.md, "Versions"): an execution runs on the workflow version it
 * started with, never on other code; a runner without that version holds it
 * (WORKFLOW_VERSION_UNAVAILABLE) until a runner that has it takes it.
 */

let db: TestDatabase;
let store: PgExecutionStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PgExecutionStore(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const Output = z.object({ ranOn: z.number(), steps: z.array(z.string()) });

const v1 = defineWorkflow({
  name: "test.versions.pinned",
  version: 1,
  input: z.object({}),
  output: Output,
  async run(ctx) {
    const a = await ctx.step("v1.first", () => "first");
    return { ranOn: 1, steps: [a] };
  },
});

/** The next release renamed the step: replaying a v1 journal with it would be non-deterministic. */
const v2 = defineWorkflow({
  ...v1,
  version: 2,
  async run(ctx) {
    const a = await ctx.step("v2.renamed", () => "renamed");
    return { ranOn: 2, steps: [a] };
  },
});

function runnerWith(...workflows: (typeof v1)[]): TurnRunner {
  return directTurnRunner(store, workflows);
}

async function startOn(version: number): Promise<string> {
  const { summary } = await store.createExecution(
    newExecution({ workflow: v1.name, workflowVersion: version }),
  );
  return summary.id;
}

async function rowOf(id: string) {
  const { rows } = await db.pool.query(
    "SELECT status, hold, output, waiting_for FROM executions WHERE id = $1",
    [id],
  );
  return rows[0];
}

describe("workflow versions", () => {
  it("the registry starts new executions on the newest version", () => {
    expect(new WorkflowRegistry([v2, v1]).get(v1.name).version).toBe(2);
  });

  it("an execution of a version the runner lacks is held, then runs on its own version", async () => {
    const id = await startOn(1);
    // A runner of the next release only: it must not run v1's execution on v2's code.
    expect(await runnerWith(v2).run(id)).toMatchObject({ kind: "held" });
    const held = await rowOf(id);
    expect(held.status).toBe("suspended");
    expect(held.hold).toMatchObject({
      code: "WORKFLOW_VERSION_UNAVAILABLE",
      details: { workflow: v1.name, version: 1, registered: [2] },
    });
    expect(held.waiting_for).toEqual([
      expect.objectContaining({ kind: "fix", name: "WORKFLOW_VERSION_UNAVAILABLE" }),
    ]);
    // A runner that carries both versions runs it on v1.
    expect(await runnerWith(v1, v2).run(id)).toMatchObject({ kind: "completed" });
    expect((await rowOf(id)).output).toEqual({ ranOn: 1, steps: ["first"] });
  });

  it("each execution replays on its own version side by side", async () => {
    const [old, current] = [await startOn(1), await startOn(2)];
    const both = runnerWith(v1, v2);
    await both.run(old);
    await both.run(current);
    expect((await rowOf(old)).output).toEqual({ ranOn: 1, steps: ["first"] });
    expect((await rowOf(current)).output).toEqual({ ranOn: 2, steps: ["renamed"] });
  });

  it("a workflow no runner knows at all is held as WORKFLOW_UNKNOWN", async () => {
    const { summary } = await store.createExecution(newExecution({ workflow: "test.versions.nowhere" }));
    expect(await runnerWith(v1).run(summary.id)).toMatchObject({ kind: "held" });
    expect((await rowOf(summary.id)).hold.code).toBe("WORKFLOW_UNKNOWN");
  });
});

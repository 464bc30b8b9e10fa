import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ChildDispatcher, StepInfo, WorkflowContext } from "../../src/engine/context.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { type TurnOutcome, TurnRunner } from "../../src/engine/turn-runner.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createLogger } from "../../src/observability/logger.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { newExecution } from "../support/new-execution.js";

/**
 * Concurrent branches on replay (docs/engine.md, "Concurrent branches"). Branches of
 * `Promise.all` that each make several calls take their later positions in the order their
 * awaits resolved; replay must hand every recorded outcome back to the branch that produced it,
 * also when the branches use the same step names.
 *
 * Turns run through the real TurnRunner and store on PostgreSQL. A "kill" freezes the current
 * turn for good (every step body of it hangs, as in a dead process) and starts the next turn,
 * which fences the frozen one out — what a runner crash and takeover do, in one process, so a
 * property test can place the kill anywhere.
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

/** The shape of a body: a sequence of steps and parallel groups of branches (depth ≤ 3). */
type Item = { step: string } | { parallel: Item[][] };
const Shape: z.ZodType<Item[]> = z.array(
  z.union([z.object({ step: z.string() }), z.object({ parallel: z.array(z.lazy(() => Shape)) })]),
);

/** World of one execution: what every step body did, and the kill switch. */
interface World {
  /** Incremented by a kill: bodies of an older generation hang for good. */
  generation: number;
  /** Step body runs per branch-local key. */
  runs: Map<string, number>;
  /** Step keys whose body started although their checkpoint had already committed. */
  afterCheckpoint: string[];
  /** Total body runs so far; the kill fires when it reaches one of `killAt`, or at step `killOn`. */
  effects: number;
  killAt: number[];
  killOn?: string;
  onKill: () => void;
  /** Each step body's delay in ms (varied so branches finish in other orders than they start). */
  delayOf: (key: string) => number;
}

const worlds = new Map<string, World>();
const never = new Promise<never>(() => undefined);

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/**
 * Runs the body of a step: records it, waits a little, and dies with its generation on a kill.
 * It also looks at the journal first: a body starting after its own checkpoint committed is the
 * defect this file guards against.
 */
async function stepBody(world: World, generation: number, key: string, info: StepInfo): Promise<string> {
  if (generation !== world.generation) return never; // a dead turn starts nothing new
  const { rowCount } = await db.pool.query(
    "SELECT 1 FROM journal_entries WHERE execution_id = $1 AND position = $2 AND state = 'ok'",
    [info.executionId, info.position],
  );
  if (generation !== world.generation) return never; // killed while it looked
  if (rowCount) world.afterCheckpoint.push(key);
  bump(world.runs, key);
  world.effects++;
  const delay = world.delayOf(key);
  if (world.killAt.includes(world.effects) || world.killOn === key) {
    world.killOn = undefined;
    world.generation++;
    world.onKill();
    return never;
  }
  await new Promise((resolve) => setTimeout(resolve, delay));
  if (generation !== world.generation) return never;
  return key;
}

async function runItems(
  ctx: WorkflowContext,
  world: World,
  generation: number,
  items: Item[],
  path: string,
  received: Record<string, string>,
): Promise<void> {
  for (const [index, item] of items.entries()) {
    const key = `${path}${index}`;
    if ("step" in item) {
      received[key] = await ctx.step(item.step, (info) => stepBody(world, generation, key, info));
    } else {
      await Promise.all(
        item.parallel.map((branch, b) => runItems(ctx, world, generation, branch, `${key}.${b}/`, received)),
      );
    }
  }
}

const branches = defineWorkflow({
  name: "test.branches.shaped",
  version: 1,
  input: z.object({ world: z.string(), shape: Shape }),
  output: z.record(z.string(), z.string()),
  async run(ctx, input) {
    const world = worlds.get(input.world) as World;
    const generation = world.generation;
    const received: Record<string, string> = {};
    await runItems(ctx, world, generation, input.shape, "", received);
    return received;
  },
});

const noDispatch: ChildDispatcher = {
  dispatchChild: () => Promise.reject(new Error("these workflows start no children")),
  dispatchActivity: () => Promise.reject(new Error("these workflows run no activities")),
};

const runner = () =>
  new TurnRunner({
    store,
    registry: new WorkflowRegistry([branches]),
    dispatcher: noDispatch,
    recovery: { maxAttempts: 3, maxDurationMs: 60_000, baseDelayMs: 10, maxDelayMs: 10 },
    logger: createLogger({ level: "error" }),
  });

/**
 * Starts the execution and runs turns until it completes: each kill abandons the turn in flight
 * (frozen) and starts the next one. Returns the output and the number of turns taken.
 */
async function runToCompletion(
  shape: Item[],
  options: { killAt: number[]; killOn?: string; delays: number[] | Record<string, number> },
): Promise<{ executionId: string; output: Record<string, string>; world: World; turns: number }> {
  const worldId = randomUUID();
  let killed: () => void = () => undefined;
  const world: World = {
    generation: 0,
    runs: new Map(),
    afterCheckpoint: [],
    effects: 0,
    killAt: options.killAt,
    ...(options.killOn ? { killOn: options.killOn } : {}),
    onKill: () => killed(),
    delayOf: (key) => {
      const { delays } = options;
      if (!Array.isArray(delays)) return delays[key] ?? 0;
      return (
        delays[[...key].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1_000_003, 7) % delays.length] ?? 0
      );
    },
  };
  worlds.set(worldId, world);
  const { summary } = await store.createExecution(
    newExecution({
      workflow: branches.name,
      workflowVersion: branches.version,
      input: { world: worldId, shape },
    }),
  );
  const turns = runner();
  for (let turn = 1; turn <= 50; turn++) {
    const kill = new Promise<"killed">((resolve) => {
      killed = () => resolve("killed");
    });
    let stuck: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      stuck = setTimeout(() => reject(new Error(`turn ${turn} did not end within 10 s`)), 10_000);
    });
    const outcome: TurnOutcome | "killed" = await Promise.race([turns.run(summary.id), kill, hung]).finally(
      () => clearTimeout(stuck),
    );
    if (outcome === "killed") continue;
    if (outcome.kind !== "completed") throw new Error(`turn ${turn} ended ${JSON.stringify(outcome)}`);
    const { rows } = await db.pool.query("SELECT output FROM executions WHERE id = $1", [summary.id]);
    return { executionId: summary.id, output: rows[0].output, world, turns: turn };
  }
  throw new Error("the execution did not complete in 50 turns");
}

/** Every step key of a shape, as the body names them. */
function stepKeys(items: Item[], path = ""): string[] {
  return items.flatMap((item, index) =>
    "step" in item
      ? [`${path}${index}`]
      : item.parallel.flatMap((branch, b) => stepKeys(branch, `${path}${index}.${b}/`)),
  );
}

describe("concurrent branches", () => {
  it("replay hands each branch its own results after a kill mid-branch (same step names)", async () => {
    // Two branches fetch then save. B's fetch finishes first, so B takes the first save position;
    // the kill lands inside A's save. Replaying by call order would give A B's save result.
    const shape: Item[] = [
      {
        parallel: [
          [{ step: "fetch" }, { step: "save" }],
          [{ step: "fetch" }, { step: "save" }],
        ],
      },
    ];
    // A's fetch is slow, so B saves first; the kill lands inside A's save.
    const { output, world, turns } = await runToCompletion(shape, {
      killAt: [],
      killOn: "0.0/1",
      delays: { "0.0/0": 400 },
    });
    expect(turns).toBe(2);
    expect(output).toEqual({ "0.0/0": "0.0/0", "0.0/1": "0.0/1", "0.1/0": "0.1/0", "0.1/1": "0.1/1" });
    // B's save ran once (journaled before the kill); A's twice (the kill caught it in flight).
    expect(Object.fromEntries(world.runs)).toEqual({ "0.0/0": 1, "0.1/0": 1, "0.1/1": 1, "0.0/1": 2 });
  });

  it("holds, never replays, a position claimed after another delivery than the one recorded", async () => {
    const shape: Item[] = [{ step: "fetch" }, { parallel: [[{ step: "save" }], [{ step: "save" }]] }];
    const { executionId } = await runToCompletion(shape, { killAt: [], delays: [0] });
    // The saves were claimed after the fetch's delivery (number 1). A journal that says otherwise
    // was not written by this code; the turn refuses it instead of guessing whose result is whose.
    await db.pool.query("UPDATE executions SET status = 'running' WHERE id = $1", [executionId]);
    await db.pool.query("UPDATE journal_entries SET cause = 0 WHERE execution_id = $1 AND position = 2", [
      executionId,
    ]);
    expect(await runner().run(executionId)).toMatchObject({ kind: "held" });
    const { rows } = await db.pool.query("SELECT hold FROM executions WHERE id = $1", [executionId]);
    expect(rows[0].hold.code).toBe("NON_DETERMINISM");
    expect(rows[0].hold.message).toMatch(/after delivery 0, but the code now calls it after delivery 1/);
  });

  it("property: any branch shape, any kill points — every branch gets its own results and no body re-runs after its checkpoint", async () => {
    // Mostly one name: the case the name check cannot tell apart.
    const name = fc.oneof({ weight: 4, arbitrary: fc.constant("save") }, fc.constantFrom("fetch", "check"));
    const shape: fc.Arbitrary<Item[]> = fc
      .letrec<{ items: Item[]; item: Item }>((tie) => ({
        items: fc.array(tie("item"), { minLength: 2, maxLength: 4 }),
        item: fc.oneof(
          { depthSize: "small", withCrossShrink: true },
          fc.record({ step: name }),
          fc.record({ parallel: fc.array(tie("items"), { minLength: 2, maxLength: 5 }) }),
          fc.record({ step: name }),
        ),
      }))
      .items.filter((items) => depth(items) <= 3 && stepKeys(items).length <= 40);
    await fc.assert(
      fc.asyncProperty(
        shape,
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 3, maxLength: 7 }),
        async (items, killAt, delays) => {
          const { output, world } = await runToCompletion(items, { killAt, delays });
          const keys = stepKeys(items);
          expect(output).toEqual(Object.fromEntries(keys.map((k) => [k, k])));
          // A body may run again only where a kill caught it before its checkpoint committed.
          expect(world.afterCheckpoint).toEqual([]);
          for (const key of keys) expect(world.runs.get(key) ?? 0).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 50 },
    );
  }, 180_000);
});

function depth(items: Item[]): number {
  return Math.max(
    0,
    ...items.map((item) => ("parallel" in item ? 1 + Math.max(0, ...item.parallel.map(depth)) : 0)),
  );
}

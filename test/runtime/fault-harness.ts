import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Redis } from "ioredis";
import { stringify } from "yaml";
import type { ExecutionClient, ExecutionView, JournalView } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import type { ExecutionQueue } from "../../src/runtime/execution-queue.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { deployBuild } from "../fixtures/deploy-workflows.js";
import { FAULT_WORKFLOWS } from "../fixtures/fault-workflows.js";
import type { TestDatabase } from "../support/database.js";
import { type TestProcess, WaitAborted, waitUntil } from "../support/processes.js";
import { startFixtureRunner } from "../support/role-process.js";
import { createTestStores } from "../support/test-stores.js";

/**
 * One test file's world for the crash and fault tests: its own database (with the fixture's
 * `side_effects` and `fault_control` tables), its own Redis prefix, a config file with short
 * lock, sweep and recovery values, an execution client, and runner processes
 * (test/fixtures/runner-process.ts) started against all of it.
 */

/** The `durable` keys a test may set; the rest keep their defaults. */
export interface DurableOverrides {
  lock?: { lockDurationMs: number; stalledIntervalMs: number };
  sweep?: { intervalMs: number; graceMs: number };
  recovery?: { maxAttempts: number; maxDurationMs: number; baseDelayMs: number; maxDelayMs: number };
  liveness?: { checkIntervalMs: number };
}

/** Short windows so a takeover, a sweep and a recovery each take about a second or two. */
export const FAST_DURABLE: DurableOverrides = {
  lock: { lockDurationMs: 2_000, stalledIntervalMs: 1_000 },
  sweep: { intervalMs: 500, graceMs: 1_000 },
  recovery: { maxAttempts: 100, maxDurationMs: 120_000, baseDelayMs: 200, maxDelayMs: 1_000 },
};

const FIXTURE_TABLES = `
  CREATE TABLE side_effects (
    n serial PRIMARY KEY,
    execution_id uuid NOT NULL,
    step text NOT NULL,
    pid int NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE TABLE fault_control (name text PRIMARY KEY);
  CREATE TABLE late_bodies (
    n serial PRIMARY KEY,
    execution_id uuid NOT NULL,
    step text NOT NULL,
    pid int NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

export interface FaultWorld {
  db: TestDatabase;
  prefix: string;
  redisUrl: string;
  client: ExecutionClient;
  queue: ExecutionQueue;
  /** Test-side Redis connection (producer settings) on `redisUrl`. */
  redis: Redis;
  /** Starts a runner and waits for its ready line. `durable` overrides this world's config. */
  startRunner(
    name: string,
    options?: { env?: Record<string, string>; durable?: DurableOverrides; databaseUrl?: string },
  ): Promise<TestProcess>;
  start(workflow: string, input: unknown): Promise<string>;
  view(executionId: string): Promise<ExecutionView>;
  journal(executionId: string): Promise<JournalView[]>;
  /** pids of the runners that ran each step's work, in order, per step name. */
  sideEffects(executionId: string): Promise<Record<string, number[]>>;
  openGate(gate: string): Promise<void>;
  /** Waits until `predicate` holds for the execution's view; returns that view. */
  waitForView(
    executionId: string,
    what: string,
    predicate: (view: ExecutionView) => boolean,
    timeoutMs?: number,
  ): Promise<ExecutionView>;
  waitForCompleted(executionId: string, timeoutMs?: number): Promise<ExecutionView>;
  close(): Promise<void>;
}

export async function createFaultWorld(
  testFile: string,
  options: { durable?: DurableOverrides; redisUrl?: string } = {},
): Promise<FaultWorld> {
  const stores = await createTestStores(testFile, options.redisUrl ? { redisUrl: options.redisUrl } : {});
  const { db, prefix } = stores;
  await db.pool.query(FIXTURE_TABLES);
  const url = stores.redisUrl;
  const redis = createRedisConnection(url, "producer");
  // Faults take Redis away on purpose; the test client retries like the API role does.
  redis.on("error", () => undefined);
  const configDir = mkdtempSync(path.join(tmpdir(), "tenor-fault-"));
  const { client, queue, close } = createExecutionClient({
    pool: db.pool,
    redis,
    prefix,
    registry: new WorkflowRegistry([...FAULT_WORKFLOWS, ...deployBuild("first")]),
    logger: createLogger({ level: "error" }),
  });
  queue.queue.on("error", () => undefined);
  let configs = 0;
  const writeConfig = (durable: DurableOverrides) => {
    const file = path.join(configDir, `config-${++configs}.yaml`);
    writeFileSync(file, stringify({ durable: { runnerConcurrency: 50, ...durable } }));
    return file;
  };

  const world: FaultWorld = {
    db,
    prefix,
    redisUrl: url,
    client,
    queue,
    redis,
    async startRunner(name, runnerOptions = {}) {
      return startFixtureRunner(
        `runner ${name}`,
        "test/fixtures/runner-process.ts",
        {
          ...stores.env,
          DATABASE_URL: runnerOptions.databaseUrl ?? db.url,
          TENOR_CONFIG: writeConfig(runnerOptions.durable ?? options.durable ?? FAST_DURABLE),
          ...runnerOptions.env,
        },
        30_000,
      );
    },
    async start(workflow, input) {
      const { executionId } = await client.start({ workflow, input });
      return executionId;
    },
    view: (executionId) => client.view(executionId),
    journal: (executionId) => client.journal(executionId),
    async sideEffects(executionId) {
      const { rows } = await db.pool.query<{ step: string; pid: number }>(
        "SELECT step, pid FROM side_effects WHERE execution_id = $1 ORDER BY n",
        [executionId],
      );
      const byStep: Record<string, number[]> = {};
      for (const row of rows) byStep[row.step] = [...(byStep[row.step] ?? []), row.pid];
      return byStep;
    },
    async openGate(gate) {
      await db.pool.query("INSERT INTO fault_control (name) VALUES ($1) ON CONFLICT DO NOTHING", [gate]);
    },
    waitForView(executionId, what, predicate, timeoutMs = 30_000) {
      return waitUntil(
        `${what} (execution ${executionId})`,
        async () => {
          const view = await client.view(executionId);
          if (view.status === "failed" && !predicate(view))
            throw new WaitAborted(`execution failed: ${JSON.stringify(view.failure)}`);
          return predicate(view) ? view : false;
        },
        { timeoutMs, intervalMs: 100 },
      );
    },
    waitForCompleted(executionId, timeoutMs = 30_000) {
      return world.waitForView(executionId, "status completed", (v) => v.status === "completed", timeoutMs);
    },
    async close() {
      await close().catch(() => undefined);
      redis.disconnect();
      await stores.drop();
      rmSync(configDir, { recursive: true, force: true });
    },
  };
  return world;
}

/** True when the execution waits for something of `kind` (timer, signal, recovery, ...). */
export function waitsFor(view: ExecutionView, kind: string, name?: string): boolean {
  return view.status === "waiting" || view.status === "suspended"
    ? (view.waitingFor ?? []).some((w) => w.kind === kind && (name === undefined || w.name === name))
    : false;
}

/** The count of each step's side effects, for compact equality assertions. */
export function counts(effects: Record<string, number[]>): Record<string, number> {
  return Object.fromEntries(Object.entries(effects).map(([step, pids]) => [step, pids.length]));
}

/** Executions in each place a fault can catch them: inside a step, on a timer, on a signal. */
export interface MixedExecutions {
  inStep: string[];
  onTimer: string[];
  onSignal: string[];
}

/**
 * Starts two executions of each kind and returns once each is where the fault should find it:
 * blocked inside step s1 on `gate`, waiting on the timer `nap` (`sleepMs`), waiting on signal `go`.
 */
export async function startMixedExecutions(
  world: FaultWorld,
  options: { gate: string; sleepMs: number },
): Promise<MixedExecutions> {
  const two = (start: () => Promise<string>) => Promise.all([start(), start()]);
  const inStep = await two(() => world.start("fault.steps", { steps: 3, gateAt: 1, gate: options.gate }));
  const onTimer = await two(() => world.start("fault.waits", { sleepMs: options.sleepMs, signal: false }));
  const onSignal = await two(() => world.start("fault.waits", { sleepMs: 1, signal: true }));
  for (const id of inStep) {
    await waitUntil(`execution ${id} inside s1`, async () => (await world.sideEffects(id)).s1?.length === 1);
  }
  for (const id of onTimer)
    await world.waitForView(id, "waiting on timer nap", (v) => waitsFor(v, "timer", "nap"));
  for (const id of onSignal)
    await world.waitForView(id, "waiting on signal go", (v) => waitsFor(v, "signal", "go"));
  return { inStep, onTimer, onSignal };
}

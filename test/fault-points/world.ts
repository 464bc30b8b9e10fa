import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import type { Redis } from "ioredis";
import type { ExecutionClient, ExecutionView } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import type { ExecutionQueue } from "../../src/runtime/execution-queue.js";
import { PgApprovals } from "../../src/store/pg-approvals.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { writeTestConfig } from "../support/config-file.js";
import type { TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import { spawnProcess, type TestProcess } from "../support/processes.js";
import { createTestStores } from "../support/test-stores.js";
import type { Arming, PointRecord } from "./interposer.js";
import { SHAPE_WORKFLOWS, STEP_RUNS_TABLE } from "./shapes.js";

/**
 * The explorer's world: its own database (with `fp_step_runs` and `fp_faults`), its own Redis
 * prefix, an execution client, and one real runner process at a time
 * (test/fixtures/fault-points-runner.ts), steered over IPC. A runner is reused for run after run
 * (armed anew each time) and replaced only when a fault killed it.
 */

/**
 * Runner settings. Long lock and sweep periods keep background traffic that names an execution
 * rare (each would otherwise add points that differ run to run); takeover after a kill does not
 * wait for them, runner liveness (250 ms) hands a dead runner's jobs over at once.
 */
const DURABLE = {
  runnerConcurrency: 20,
  lock: { lockDurationMs: 6_000, stalledIntervalMs: 3_000 },
  sweep: { intervalMs: 5_000, graceMs: 3_000 },
  recovery: { maxAttempts: 100, maxDurationMs: 60_000, baseDelayMs: 200, maxDelayMs: 1_000 },
};

const FAULTS_TABLE = `
  CREATE TABLE fp_faults (
    n serial PRIMARY KEY,
    run text NOT NULL,
    point text NOT NULL,
    fault text NOT NULL,
    pid int NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

/** How long a runner may take to answer an IPC request, in ms. */
const IPC_TIMEOUT_MS = 10_000;

export interface RunnerHandle {
  process: TestProcess;
  arm(arming: Arming): Promise<void>;
  collect(): Promise<{ points: PointRecord[]; fired: boolean }>;
}

export interface ExplorerWorld {
  db: TestDatabase;
  client: ExecutionClient;
  queue: ExecutionQueue;
  /** The live runner; a fresh, unarmed one when the last one died. */
  runner(): Promise<RunnerHandle>;
  /** Runner processes spawned so far. */
  spawned(): number;
  start(workflow: string, input: unknown): Promise<string>;
  view(executionId: string): Promise<ExecutionView>;
  /**
   * Votes for the approval `release` of `executionId` and wakes it (as the approvals route does);
   * false when the execution was not parked on it (vote again later).
   */
  approve(executionId: string, paramsHash: string): Promise<boolean>;
  /** When (PostgreSQL clock) and in which runner the fault of run `run` fired; null if it never did. */
  fired(run: string): Promise<{ at: Date; pid: number } | null>;
  close(): Promise<void>;
}

export async function createExplorerWorld(testFile: string): Promise<ExplorerWorld> {
  const stores = await createTestStores(testFile);
  const { db } = stores;
  await db.pool.query(STEP_RUNS_TABLE);
  await db.pool.query(FAULTS_TABLE);
  const redis: Redis = createRedisConnection(stores.redisUrl, "producer");
  redis.on("error", () => undefined);
  const config = writeTestConfig("fault-points", { durable: DURABLE });
  const { client, queue, close } = createExecutionClient({
    pool: db.pool,
    redis,
    prefix: stores.prefix,
    registry: new WorkflowRegistry(SHAPE_WORKFLOWS),
    logger: createLogger({ level: "error" }),
  });
  queue.queue.on("error", () => undefined);
  const approvals = new PgApprovals(db.pool);
  const approverKeyId = randomUUID();
  let current: RunnerHandle | null = null;
  let spawned = 0;

  const spawnRunner = async (): Promise<RunnerHandle> => {
    const child = spawnProcess(
      `fault-points runner ${++spawned}`,
      ...entryCommand("test/fixtures/fault-points-runner.ts"),
      {
        ipc: true,
        env: { ...stores.env, TENOR_CONFIG: config.file },
      },
    );
    await child.waitFor(/\{"ready":true/, 60_000);
    return runnerHandle(child);
  };

  return {
    db,
    client,
    queue,
    async runner() {
      if (!current?.process.running()) current = await spawnRunner();
      return current;
    },
    spawned: () => spawned,
    async start(workflow, input) {
      return (await client.start({ workflow, input })).executionId;
    },
    view: (executionId) => client.view(executionId),
    async approve(executionId, paramsHash) {
      const outcome = await approvals.vote({
        orgId: "default",
        executionId,
        name: "release",
        approver: { keyId: approverKeyId, name: "fp-approver", role: "approver", subject: "fp-approver" },
        decision: "approve",
        paramsHash,
        reason: null,
      });
      if ((outcome.kind === "recorded" && outcome.decision) || outcome.kind === "decided") {
        await queue.wake(executionId, "fp.approval");
        return true;
      }
      return false;
    },
    async fired(run) {
      const { rows } = await db.pool.query<{ at: Date; pid: number }>(
        "SELECT at, pid FROM fp_faults WHERE run = $1 ORDER BY n LIMIT 1",
        [run],
      );
      return rows[0] ?? null;
    },
    async close() {
      if (current?.process.running()) await current.process.kill();
      await close().catch(() => undefined);
      redis.disconnect();
      await stores.drop();
      rmSync(config.dir, { recursive: true, force: true });
    },
  };
}

function runnerHandle(child: TestProcess): RunnerHandle {
  const request = <T>(message: object, type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (reply: { type?: string }) => {
        if (reply?.type !== type) return;
        done();
        resolve(reply as T);
      };
      const onExit = () => {
        done();
        reject(new Error(`${child.name} exited while asked for ${type}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${child.name} did not answer ${type} within ${IPC_TIMEOUT_MS} ms`));
      }, IPC_TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        child.child.off("message", onMessage);
        child.child.off("exit", onExit);
      };
      child.child.on("message", onMessage);
      child.child.on("exit", onExit);
      child.child.send(message);
    });
  return {
    process: child,
    arm: async (arming) => {
      await request({ cmd: "arm", ...arming }, "armed");
    },
    collect: () => request({ cmd: "collect" }, "points"),
  };
}

import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { registerRunnerGauges } from "../../src/roles/runner-metrics.js";
import { ExecutionQueue } from "../../src/runtime/execution-queue.js";
import { executionJobId } from "../../src/transport/queue-names.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { sampleValue } from "../observability/metric-labels.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

/** The runner's SRE gauges on a real PostgreSQL and Redis: zero series first, then what is there. */
let db: TestDatabase;
let redis: Redis;
const prefix = testRedisPrefix(import.meta.url);

beforeAll(async () => {
  db = await createTestDatabase();
  redis = createRedisConnection(redisUrl(), "producer");
});

afterAll(async () => {
  await deleteRedisPrefix(prefix, redis).catch(() => undefined);
  await redis.quit();
  await db.drop();
});

describe("runner gauges an SRE alerts on", () => {
  it("oldest waiting job's age per queue and overdue timers, each a zero series when idle", async () => {
    const metrics = createMetrics("runner");
    const gauges = registerRunnerGauges(metrics, {
      pool: db.pool,
      redis,
      prefix,
      queueNames: ["executions", "schedules"],
      overdueGraceMs: 10_000,
      livenessWindowMs: 10_000,
    });
    const scrape = () => metrics.registry.metrics();
    try {
      const idle = await scrape();
      for (const queue of ["executions", "schedules"])
        expect(sampleValue(idle, "tenor_queue_oldest_waiting_seconds", { queue }), queue).toBe(0);
      expect(sampleValue(idle, "tenor_timers_overdue", {})).toBe(0);

      const executions = new Queue("executions", { connection: redis, prefix });
      // Two seconds old when scraped: BullMQ keeps the timestamp it is given.
      await executions.add("turn", { executionId: randomUUID() }, { timestamp: Date.now() - 2_000 });
      await executions.close();
      // One timer a minute late (overdue), one ten seconds ahead (not).
      await db.pool.query(
        `INSERT INTO executions (id, workflow, workflow_version, org_id, status, input, wake_at)
         VALUES ($1, 'w', 1, 'o', 'waiting', '{}', now() - interval '1 minute'),
                ($2, 'w', 1, 'o', 'waiting', '{}', now() + interval '10 seconds')`,
        [randomUUID(), randomUUID()],
      );
      const busy = await scrape();
      const age = sampleValue(busy, "tenor_queue_oldest_waiting_seconds", { queue: "executions" }) ?? 0;
      expect(age).toBeGreaterThanOrEqual(2);
      expect(age).toBeLessThan(30);
      expect(sampleValue(busy, "tenor_queue_oldest_waiting_seconds", { queue: "schedules" })).toBe(0);
      expect(sampleValue(busy, "tenor_timers_overdue", {})).toBe(1);
    } finally {
      await gauges.close();
    }
  });
  it("reports a woken execution's age from its wake, not from when it was created", async () => {
    const metrics = createMetrics("runner");
    const wokenPrefix = `${prefix}-woken`;
    const gauges = registerRunnerGauges(metrics, {
      pool: db.pool,
      redis,
      prefix: wokenPrefix,
      queueNames: ["executions"],
      overdueGraceMs: 10_000,
      livenessWindowMs: 10_000,
    });
    const raw = new Queue("executions", { connection: redis, prefix: wokenPrefix });
    const queue = new ExecutionQueue(redis, wokenPrefix, createLogger({ level: "error" }));
    try {
      const executionId = randomUUID();
      // Created ten minutes ago, parked on a timer an hour out, then woken (a signal came).
      await raw.add(
        "turn",
        { executionId },
        { jobId: executionJobId(executionId), timestamp: Date.now() - 600_000, delay: 3_600_000 },
      );
      await queue.wake(executionId);
      expect(await raw.getJobState(executionJobId(executionId))).toBe("waiting");
      const age = sampleValue(await metrics.registry.metrics(), "tenor_queue_oldest_waiting_seconds", {
        queue: "executions",
      });
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(60);
    } finally {
      await deleteRedisPrefix(wokenPrefix, redis).catch(() => undefined);
      await raw.close();
      await queue.close();
      await gauges.close();
    }
  });
});

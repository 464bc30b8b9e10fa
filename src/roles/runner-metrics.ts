import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { KeyedLanes } from "../keyed/keyed-lanes.js";
import { METRIC_NAMES } from "../observability/metric-names.js";
import { scrapedGauge, type TenorMetrics } from "../observability/metrics.js";
import { registerLiveReplicasGauge } from "../ownership/replica-gauge.js";
import { PgReplicaDirectory } from "../ownership/store/pg-replica-directory.js";
import { readinessStampsKey } from "../runtime/execution-queue.js";
import type { ScheduleDefinition } from "../schedules/schedule-definition.js";
import { countLiveExecutions, countOverdueTimers } from "../store/pg-metrics-queries.js";
import { hasFreeConnection } from "../store/pg-pool.js";
import { KEYED_SPACES } from "../transport/queue-names.js";
import { registerWebhookBacklogGauge } from "../webhooks/webhook-metrics.js";

/** BullMQ job states reported as queue depth. */
const QUEUE_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children", "failed"] as const;

/**
 * The runner's scrape-time gauges: non-terminal executions by workflow and state (suspended and
 * held among them, from PostgreSQL), the webhook outbox's backlog (PostgreSQL) and queue depth by
 * queue and state (from BullMQ). Only runners
 * register them, so each number comes from the role that owns the work. Returns a closer for the
 * queue handles it opens.
 */
export function registerRunnerGauges(
  metrics: TenorMetrics,
  deps: {
    pool: Pool;
    redis: Redis;
    prefix: string;
    queueNames: readonly string[];
    /** Past its wake time by more than this, a timer counts as overdue (the sweep's grace), in ms. */
    overdueGraceMs: number;
    /** A runner whose heartbeat is older than this is not live (`durable.sharding.livenessWindowMs`). */
    livenessWindowMs: number;
  },
): { close(): Promise<void> } {
  scrapedGauge(
    metrics,
    {
      name: METRIC_NAMES.executionsCurrent,
      help: "Non-terminal executions by workflow and state (running, waiting, suspended, held).",
      labelNames: ["workflow", "state"],
    },
    async () =>
      (await countLiveExecutions(deps.pool)).map((row) => ({
        labels: { workflow: row.workflow, state: row.state },
        value: row.count,
      })),
  );
  registerWebhookBacklogGauge(metrics, deps.pool);
  const queues = deps.queueNames.map(
    (name) => new Queue(name, { connection: deps.redis, prefix: deps.prefix }),
  );
  scrapedGauge(
    metrics,
    {
      name: METRIC_NAMES.queueDepth,
      help: "BullMQ jobs by queue and state.",
      labelNames: ["queue", "state"],
    },
    async () => {
      const samples = await Promise.all(
        queues.map(async (queue) => {
          const counts = await queue.getJobCounts(...QUEUE_STATES);
          return QUEUE_STATES.map((state) => ({
            labels: { queue: queue.name, state },
            value: counts[state] ?? 0,
          }));
        }),
      );
      return samples.flat();
    },
  );
  scrapedGauge(
    metrics,
    {
      name: METRIC_NAMES.queueOldestWaitingAge,
      help: "Age in seconds of each queue's oldest job waiting for a worker (0 when none waits).",
      labelNames: ["queue"],
    },
    async () =>
      Promise.all(
        queues.map(async (queue) => {
          // Oldest first: the job the next free worker takes.
          const [oldest] = await queue.getJobs(["wait"], 0, 0, true);
          // A woken execution's job is as old as its run: its readiness stamp says since when it waits.
          const stamp = oldest
            ? await deps.redis.hget(readinessStampsKey(queue.qualifiedName), oldest.id ?? "")
            : null;
          const readySince = oldest
            ? stamp === null
              ? oldest.timestamp + (oldest.delay ?? 0)
              : Number(stamp)
            : null;
          return {
            labels: { queue: queue.name },
            value: readySince === null ? 0 : Math.max(0, (Date.now() - readySince) / 1000),
          };
        }),
      ),
  );
  scrapedGauge(
    metrics,
    {
      name: METRIC_NAMES.timersOverdue,
      help: "Waiting or suspended executions past their wake time by more than the sweep's grace.",
      labelNames: [],
    },
    async () => [{ labels: {}, value: await countOverdueTimers(deps.pool, deps.overdueGraceMs) }],
  );
  registerLiveReplicasGauge(metrics, new PgReplicaDirectory(deps.pool, deps.livenessWindowMs), () =>
    hasFreeConnection(deps.pool),
  );
  const spaces = Object.values(KEYED_SPACES).map(
    (space) => new KeyedLanes(deps.redis, deps.prefix, space, space === KEYED_SPACES.entities),
  );
  scrapedGauge(
    metrics,
    {
      name: METRIC_NAMES.keyedLaneDepth,
      help: "Keyed items over all lanes of a space, by space and state (pending, in_flight, ready).",
      labelNames: ["space", "state"],
    },
    async () =>
      (
        await Promise.all(
          spaces.map(async (lanes) => {
            const depth = await lanes.depth();
            return [
              { labels: { space: lanes.space, state: "pending" }, value: depth.pending },
              { labels: { space: lanes.space, state: "in_flight" }, value: depth.inFlight },
              { labels: { space: lanes.space, state: "ready" }, value: depth.ready },
            ];
          }),
        )
      ).flat(),
  );
  return { close: async () => void (await Promise.all(queues.map((q) => q.close()))) };
}

/**
 * Schedule definitions whose runs count `tenor_schedule_runs_total` by schedule and outcome, and
 * whose sweep reports (`summary.reenqueued`) count `tenor_wakeup_repairs_total`.
 */
export function measuredSchedules(
  metrics: TenorMetrics,
  definitions: readonly ScheduleDefinition[],
): ScheduleDefinition[] {
  return definitions.map((definition) => ({
    ...definition,
    async run(ctx) {
      try {
        const result = await definition.run(ctx);
        metrics.scheduleRuns.inc({ schedule: definition.name, outcome: result.outcome });
        const repaired = (result.summary as { reenqueued?: unknown } | undefined)?.reenqueued;
        if (typeof repaired === "number" && repaired > 0) metrics.wakeupRepairs.inc(repaired);
        return result;
      } catch (error) {
        metrics.scheduleRuns.inc({ schedule: definition.name, outcome: "failed" });
        throw error;
      }
    },
  }));
}

import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { TenorConfig } from "../config/schema.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import type { Logger } from "../observability/logger.js";
import { completedJobRetentionPolicy } from "../retention/queue-retention.js";
import { retentionCutoff, runRetentionPass } from "../retention/retention-pass.js";
import type { ExecutionQueue } from "../runtime/execution-queue.js";
import { sweepExecutions, wakeCancelRequested, wakeSatisfiedWaits } from "../runtime/execution-sweep.js";
import type { PgWaitProbe } from "../store/pg-wait-probe.js";
import { executionRetentionPolicy } from "../store/retention/execution-retention.js";
import {
  keyedCommandRetentionPolicy,
  replicaRetentionPolicy,
} from "../store/retention/housekeeping-retention.js";
import type { RetentionPolicy } from "../store/retention/retention-policy.js";
import { scheduleRunRetentionPolicy } from "../store/retention/schedule-run-retention.js";
import { webhookRetentionPolicy } from "../store/retention/webhook-retention.js";
import { blockchainHealthSchedule, type LedgerHealthReader } from "./blockchain-health-collector.js";
import { type OperationPassDeps, runOperationPass } from "./operation-pass.js";
import { SCHEDULE_NAMES, type ScheduleDefinition } from "./schedule-definition.js";
import { rebuildRollups } from "./store/pg-monitoring-rollups.js";

export interface RunnerScheduleDependencies {
  config: TenorConfig;
  pool: Pool;
  redis: Redis;
  executionQueue: ExecutionQueue;
  /** Queues whose completed jobs retention removes (the executions queue, the schedules queue, ...). */
  retainedQueues: () => readonly Queue[];
  logger: Logger;
  /** The sweep's reader of waits PostgreSQL can satisfy now. */
  waitProbe: PgWaitProbe;
  /** The Ledger Index's per-chain health, which the blockchain health collector records. */
  ledgerHealth: LedgerHealthReader;
  /** The workflows this runner serves: a bulk signal checks its payload against their schemas. */
  workflows: WorkflowRegistry;
  /** The stores bulk operations read and act through. */
  operationStores: Pick<OperationPassDeps, "operations" | "commands" | "signals">;
}

/** Daily retention at 03:17 UTC: off the hour, when other cron work crowds in. */
const RETENTION_PATTERN = "17 3 * * *";

/**
 * Every cron and singleton schedule of the runners, defined in code with their cadence from
 * configuration (docs/schedules.md, "The schedules").
 */
export function runnerSchedules(deps: RunnerScheduleDependencies): ScheduleDefinition[] {
  const { config, pool } = deps;
  return [
    {
      name: SCHEDULE_NAMES.executionSweep,
      cadence: { kind: "every", everyMs: config.durable.sweep.intervalMs },
      async run() {
        const sweep = {
          pool,
          redis: deps.redis,
          queue: deps.executionQueue,
          logger: deps.logger.child({ component: "sweep" }),
          graceMs: config.durable.sweep.graceMs,
        };
        const report = await sweepExecutions(sweep);
        const cancelWakes = await wakeCancelRequested(sweep);
        const satisfiedWakes = await wakeSatisfiedWaits({ ...sweep, probe: deps.waitProbe });
        const moved = report.reenqueued + cancelWakes + satisfiedWakes;
        return {
          outcome: moved > 0 ? "succeeded" : "empty",
          summary: { ...report, cancelWakes, satisfiedWakes },
        };
      },
    },
    {
      name: SCHEDULE_NAMES.monitoringRollups,
      cadence: { kind: "every", everyMs: config.monitoring.rollups.intervalSeconds * 1_000 },
      async run({ logger }) {
        const report = await rebuildRollups({
          pool,
          logger: logger.child({ component: "monitoring" }),
          retentionDays: config.durable.retention.days,
        });
        return {
          outcome: report.rebuilt.length > 0 ? "succeeded" : "empty",
          summary: {
            rebuilt: report.rebuilt.length,
            capped: report.capped,
            gapHoursRemaining: report.gapHoursRemaining,
          },
        };
      },
    },
    blockchainHealthSchedule(config.monitoring.blockchainHealthCollector.intervalSeconds, deps.ledgerHealth),
    {
      name: SCHEDULE_NAMES.bulkOperations,
      cadence: { kind: "every", everyMs: config.durable.operations.intervalMs },
      async run({ logger }) {
        const report = await runOperationPass({
          ...deps.operationStores,
          queue: deps.executionQueue,
          workflows: deps.workflows,
          logger: logger.child({ component: "schedules" }),
          batchSize: config.durable.operations.batchSize,
          // Half a lock window: the tick ends long before its job's lock could lapse.
          budgetMs: Math.max(1_000, config.durable.lock.lockDurationMs / 2),
        });
        return {
          outcome: report.items > 0 || report.finished.length > 0 ? "succeeded" : "empty",
          summary: { ...report },
        };
      },
    },
    {
      name: SCHEDULE_NAMES.retention,
      cadence: { kind: "cron", pattern: RETENTION_PATTERN, tz: "UTC", periodMs: 86_400_000 },
      async run({ logger }) {
        const policies: RetentionPolicy[] = [
          executionRetentionPolicy(pool),
          scheduleRunRetentionPolicy(pool),
          keyedCommandRetentionPolicy(pool),
          replicaRetentionPolicy(pool),
          webhookRetentionPolicy(pool),
          ...deps.retainedQueues().map((queue) => completedJobRetentionPolicy(queue, deps.redis)),
        ];
        const report = await runRetentionPass({
          policies,
          cutoff: retentionCutoff(new Date(), config.durable.retention.days),
          batchSize: config.durable.retention.batchSize,
          logger: logger.child({ component: "retention" }),
        });
        const summary = { ...report };
        if (report.failures > 0)
          return {
            outcome: "failed",
            summary,
            error: `${report.failures} retention failure(s); see the pass report`,
          };
        return { outcome: report.deletedTotal > 0 ? "succeeded" : "empty", summary };
      },
    },
  ];
}

import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import {
  cancelRequestedUnfinished,
  type SweepCandidate,
  staleUnfinishedExecutions,
} from "../store/pg-sweep-queries.js";
import type { PgWaitProbe } from "../store/pg-wait-probe.js";
import { executionJobId } from "../transport/queue-names.js";
import type { ExecutionQueue } from "./execution-queue.js";

export interface SweepOptions {
  pool: Pool;
  redis: Redis;
  queue: ExecutionQueue;
  logger: Logger;
  /** Executions touched more recently than this are left alone (their turn may be enqueueing). */
  graceMs: number;
  /** Rows examined per query. */
  batchSize?: number;
}

export interface SweepReport {
  examined: number;
  reenqueued: number;
}

/**
 * The convergent sweep (docs/engine.md, "Redis is not the ledger"): PostgreSQL is the ledger and
 * Redis only what wakes it. Every execution that PostgreSQL says is not finished must have a live job;
 * one that has none (Redis flushed, failed over, or a crash between insert and enqueue) gets its
 * job back, delayed until its recorded wake time. Adding is idempotent by job id, so several
 * runners may sweep at once. Runners call it as the `execution-sweep` schedule (src/schedules),
 * once per tick across runners.
 */
export async function sweepExecutions(options: SweepOptions): Promise<SweepReport> {
  const batchSize = options.batchSize ?? 500;
  const report: SweepReport = { examined: 0, reenqueued: 0 };
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const rows = await staleUnfinishedExecutions(options.pool, options.graceMs, after, batchSize);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]?.id as string;
    report.examined += rows.length;
    const missing = await findWithoutLiveJob(options, rows);
    for (const candidate of missing) {
      await options.queue.enqueue(candidate.id, candidate.workflow, candidate.wake_at?.getTime());
      report.reenqueued++;
    }
    if (rows.length < batchSize) break;
  }
  if (report.reenqueued > 0)
    options.logger.warn("sweep re-enqueued executions without a live job", { ...report });
  return report;
}

/** One pipelined round trip per batch: a job hash that is missing or already finished is not live. */
async function findWithoutLiveJob(
  options: SweepOptions,
  candidates: SweepCandidate[],
): Promise<SweepCandidate[]> {
  const base = options.queue.queue.qualifiedName;
  const pipeline = options.redis.pipeline();
  for (const candidate of candidates)
    pipeline.hmget(`${base}:${executionJobId(candidate.id)}`, "timestamp", "finishedOn");
  const results = (await pipeline.exec()) ?? [];
  const missing: SweepCandidate[] = [];
  for (const [i, candidate] of candidates.entries()) {
    const [error, value] = results[i] ?? [null, null];
    if (error) continue;
    const [createdAt, finishedOn] = (value as (string | null)[]) ?? [];
    if (createdAt === null || finishedOn !== null) {
      if (finishedOn !== null) await options.queue.queue.remove(executionJobId(candidate.id)).catch(() => 0);
      missing.push(candidate);
    }
  }
  return missing;
}

/**
 * Wakes executions whose cancellation was requested more than `graceMs` ago and
 * that are still not terminal: the API's own wake can miss a turn that was running at that moment
 * and then parked. Such rows are rare and short-lived, so this is one small query per pass.
 */
export async function wakeCancelRequested(options: SweepOptions): Promise<number> {
  const rows = await cancelRequestedUnfinished(options.pool, options.graceMs, options.batchSize ?? 500);
  for (const row of rows) await options.queue.wake(row.id, row.workflow);
  return rows.length;
}

/**
 * Wakes every waiting execution whose wait PostgreSQL says can be satisfied now
 * (see PgWaitProbe): the repair of a wake-up lost between commit and wake (a sender killed, Redis
 * erroring). No grace period: a wake is idempotent and a job that is active or waiting is left
 * alone, so a lost wake-up is repaired within one sweep interval
 * (docs/engine.md, "Wake-ups without loss").
 */
export async function wakeSatisfiedWaits(
  options: Pick<SweepOptions, "queue" | "logger" | "batchSize"> & { probe: PgWaitProbe },
): Promise<number> {
  const { probe } = options;
  const batchSize = options.batchSize ?? 500;
  let woken = 0;
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const rows = await probe.satisfiedWaits(after, batchSize);
    for (const row of rows) await options.queue.wake(row.id, row.workflow);
    woken += rows.length;
    if (rows.length < batchSize) break;
    after = rows[rows.length - 1]?.id as string;
  }
  if (woken > 0) options.logger.info("sweep rang executions whose wait can be satisfied", { woken });
  return woken;
}

import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import type { ExecutionQueue } from "./execution-queue.js";
import { executionJobId } from "./queue-names.js";

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

interface Candidate {
  id: string;
  workflow: string;
  wake_at: Date | null;
}

/**
 * The convergent sweep (DESIGN §2.4): PostgreSQL is the ledger and Redis the doorbell. Every
 * execution that PostgreSQL says is not finished must have a live job; one that has none (Redis
 * flushed, failed over, or a crash between insert and enqueue) gets its job back, delayed until
 * its recorded wake time. Adding is idempotent by job id, so several runners may sweep at once.
 */
export async function sweepExecutions(options: SweepOptions): Promise<SweepReport> {
  const batchSize = options.batchSize ?? 500;
  const report: SweepReport = { examined: 0, reenqueued: 0 };
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const { rows } = await options.pool.query<Candidate>(
      `SELECT id, workflow, wake_at FROM executions
       WHERE status IN ('running', 'waiting', 'suspended') AND updated_at < now() - make_interval(secs => $1::float / 1000)
         AND id > $2
       ORDER BY id LIMIT $3`,
      [options.graceMs, after, batchSize],
    );
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
async function findWithoutLiveJob(options: SweepOptions, candidates: Candidate[]): Promise<Candidate[]> {
  const base = options.queue.queue.qualifiedName;
  const pipeline = options.redis.pipeline();
  for (const candidate of candidates)
    pipeline.hmget(`${base}:${executionJobId(candidate.id)}`, "timestamp", "finishedOn");
  const results = (await pipeline.exec()) ?? [];
  const missing: Candidate[] = [];
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

/** Runs the sweep every `intervalMs` until stopped; a failed pass is logged and the next one tries again. */
export function startSweepLoop(options: SweepOptions & { intervalMs: number }): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    if (stopped) return;
    running = sweepExecutions(options).catch((error: Error) =>
      options.logger.warn("sweep pass failed; the next pass retries", { error: error.message }),
    );
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

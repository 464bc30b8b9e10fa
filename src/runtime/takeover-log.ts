import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import { lastActivityOf } from "../store/pg-execution-activity.js";
import { startRepeatingTask } from "../transport/repeating-task.js";

/** What one takeover line reports. */
export interface TakeoverReport {
  /** This runner: its stalled check found the jobs and put them back for the runners to resume. */
  runner: string;
  /** The runner that held them (its BullMQ worker name), or `unknown` when it was not seen. */
  previousRunner: string;
  executions: number;
  /** Milliseconds from the executions' last write in PostgreSQL to this detection. */
  afterMs: number | null;
}

export interface TakeoverLogOptions {
  /** The executions worker: its `stalled` events name the jobs whose runner stopped renewing locks. */
  worker: { on(event: "stalled", listener: (jobId: string) => void): unknown };
  redis: Redis;
  /** `<prefix>:<queue>`, the key prefix of the executions queue's keys. */
  queueKey: string;
  pool: Pool;
  /** This runner's name, which its worker also stores on every job it takes (BullMQ `name`). */
  runnerId: string;
  logger: Logger;
  /** BullMQ's stalled check period, in ms: holders are read twice per period. */
  stalledIntervalMs: number;
  /** Called with every report after it is logged (tests). */
  onTakeover?: (report: TakeoverReport) => void;
}

/**
 * Logs every takeover of a dead (or frozen) runner's executions: which runner held them, how many,
 * and how long after their last write (docs/operations.md, "Takeover").
 *
 * Who held a job cannot be read when BullMQ reports it stalled: the job is already back in the
 * wait list and an idle worker may take it (and overwrite its holder) within a round trip. BullMQ
 * marks every active job as a stall candidate one check before it may declare it stalled, so the
 * holders of the candidates are read twice per check period and remembered; a stalled job is
 * reported under the holder remembered for it. `stalled` events of one check arrive in one
 * synchronous loop; they are gathered until the next macrotask and reported once per holder.
 */
export class TakeoverLog {
  private holders = new Map<string, string>();
  private previousHolders = new Map<string, string>();
  private pending: string[] = [];
  private readonly scan: { stop(): Promise<void> };

  constructor(private readonly options: TakeoverLogOptions) {
    options.worker.on("stalled", (jobId) => {
      if (this.pending.length === 0) setImmediate(() => void this.flush());
      this.pending.push(jobId);
    });
    this.scan = startRepeatingTask(
      Math.max(1, Math.floor(options.stalledIntervalMs / 2)),
      () => this.readHolders(),
      (error) => options.logger.debug("could not read stall candidates", { error: error.message }),
    );
  }

  async stop(): Promise<void> {
    await this.scan.stop();
  }

  /** Remembers the holder of every stall candidate (two scans, so a check between them finds one). */
  private async readHolders(): Promise<void> {
    const { redis, queueKey } = this.options;
    const candidates = await redis.smembers(`${queueKey}:stalled`);
    const pipeline = redis.pipeline();
    for (const jobId of candidates) pipeline.hget(`${queueKey}:${jobId}`, "pb");
    const results = candidates.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    const holders = new Map<string, string>();
    for (const [i, jobId] of candidates.entries()) {
      const holder = results[i]?.[1];
      if (typeof holder === "string") holders.set(jobId, holder);
    }
    this.previousHolders = this.holders;
    this.holders = holders;
  }

  private async flush(): Promise<void> {
    const jobIds = this.pending;
    this.pending = [];
    try {
      for (const report of await this.reportsFor(jobIds)) {
        this.options.logger.warn("took over executions of a runner that stopped renewing its locks", {
          ...report,
        });
        this.options.onTakeover?.(report);
      }
    } catch (error) {
      this.options.logger.warn("could not report a takeover", {
        executions: jobIds.length,
        error: (error as Error).message,
      });
    }
  }

  /**
   * Reports the jobs a survivor moved back to wait from a runner known dead (runner liveness,
   * src/ownership/runner-liveness.ts): that path bypasses BullMQ's stalled check and its events.
   * Only the executions queue's jobs count; activity jobs are not executions.
   */
  async reportReclaimed(
    previousRunner: string,
    moved: readonly { queue: string; jobIds: string[] }[],
  ): Promise<void> {
    const executionIds = moved.filter((m) => m.queue === this.options.queueKey).flatMap((m) => m.jobIds);
    if (executionIds.length === 0) return;
    try {
      const report = await this.report(previousRunner, executionIds);
      this.options.logger.warn("took over executions of a runner whose session ended", { ...report });
      this.options.onTakeover?.(report);
    } catch (error) {
      this.options.logger.warn("could not report a takeover", {
        executions: executionIds.length,
        error: (error as Error).message,
      });
    }
  }

  private async reportsFor(jobIds: string[]): Promise<TakeoverReport[]> {
    // An execution's job id is its execution id (executionJobId).
    const byHolder = new Map<string, string[]>();
    for (const jobId of jobIds) {
      const holder = this.holders.get(jobId) ?? this.previousHolders.get(jobId) ?? "unknown";
      byHolder.set(holder, [...(byHolder.get(holder) ?? []), jobId]);
    }
    const reports: TakeoverReport[] = [];
    for (const [previousRunner, executionIds] of byHolder)
      reports.push(await this.report(previousRunner, executionIds));
    return reports;
  }

  private async report(previousRunner: string, executionIds: string[]): Promise<TakeoverReport> {
    const last = await lastActivityOf(this.options.pool, executionIds);
    return {
      runner: this.options.runnerId,
      previousRunner,
      executions: executionIds.length,
      afterMs: last ? Math.max(0, Date.now() - last.getTime()) : null,
    };
  }
}

import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import { KEYED_SPACES } from "../transport/queue-names.js";
import { WORKFLOW_ADMISSIONS } from "./entity.js";
import { KeyedLanes, type LaneItem } from "./keyed-lanes.js";
import { queuedBefore } from "./queued-before.js";
import {
  finishAdmission,
  insertAdmission,
  readAdmission,
  refreshAhead,
  startAdmissions,
} from "./store/pg-keyed-commands.js";

/** Enqueues an execution's job; the executions queue (idempotent by job id). */
export interface ExecutionStarter {
  enqueue(executionId: string, workflow: string): Promise<void>;
}

export interface KeyedAdmissionRequest {
  executionId: string;
  workflow: string;
  key: string;
  /** Most executions of this key running at once. */
  limit: number;
}

const TERMINAL = new Set(["completed", "failed"]);

/**
 * Keyed workflows (docs/keyed.md, "Keyed workflows"): an execution whose workflow declares `key` is
 * admitted into its key's line instead of being enqueued. While executions of the key are ahead of
 * it, it is `waiting` with `{ kind: "key", name: <key>, details: { ahead } }`; when it is promoted
 * its job is added to the executions queue, and when it reaches a terminal state its slot goes to
 * the next.
 *
 * Order of effects, so that a crash at any point leaves work the repair completes: the admission
 * row is committed before Redis hears of it; a promotion is recorded in PostgreSQL before the job
 * is added; an admission is marked done before its slot is released.
 */
export class KeyedWorkflowGate {
  readonly lanes: KeyedLanes;

  constructor(
    private readonly deps: {
      pool: Pool;
      redis: Redis;
      prefix: string;
      starter: ExecutionStarter;
      logger: Logger;
    },
  ) {
    this.lanes = new KeyedLanes(deps.redis, deps.prefix, KEYED_SPACES.workflows, false);
  }

  /** Admits an execution into its key's line; idempotent (a repeated start admits nothing new). */
  async admit(request: KeyedAdmissionRequest): Promise<void> {
    const { pool } = this.deps;
    const row = (await insertAdmission(pool, request)) ?? (await readAdmission(pool, request.executionId));
    if (!row) throw new Error(`admission of execution ${request.executionId} neither inserted nor found`);
    if (row.status === "running") {
      await this.deps.starter.enqueue(request.executionId, request.workflow);
      return;
    }
    if (row.status !== "queued") return;
    const own: LaneItem = { id: request.executionId, lane: request.key, seq: row.seq, limit: request.limit };
    const gaps = await this.gapsBefore(own);
    const { lost, promoted } = await this.lanes.enqueue([...gaps, own]);
    if (lost) {
      this.deps.logger.warn("keyed workflow state lost in Redis; the repair admits this execution", {
        executionId: request.executionId,
      });
    }
    await this.start(promoted);
    if (!promoted.includes(request.executionId)) await this.refreshAhead(request.key);
  }

  /**
   * Admissions of the same key committed before this one and still queued, whose starter was slow
   * or died before its enqueue: enqueued with this one, they keep their place ahead of it and one
   * of them may be promoted (and started) instead (docs/keyed.md, "Order"). A failed read is
   * logged and leaves the gap to the repair.
   */
  private async gapsBefore(own: LaneItem): Promise<LaneItem[]> {
    try {
      const bound = { entity: WORKFLOW_ADMISSIONS, key: own.lane, seq: BigInt(own.seq) };
      return await queuedBefore(this.deps.pool, [bound], (_entity, key) => key);
    } catch (error) {
      this.deps.logger.warn("could not read earlier admissions of this key; the repair will", {
        executionId: own.id,
        error: (error as Error).message,
      });
      return [];
    }
  }

  /** Called when a keyed execution reached a terminal state: its slot goes to the next in line. */
  async finished(executionId: string): Promise<void> {
    const key = await finishAdmission(this.deps.pool, executionId);
    const promoted = await this.lanes.release([executionId]);
    await this.start(promoted);
    if (key !== undefined) await this.refreshAhead(key);
  }

  /** Like `finished`, for an execution that may not be keyed: touches Redis only when it was admitted. */
  async finishedIfAdmitted(executionId: string): Promise<void> {
    const key = await finishAdmission(this.deps.pool, executionId);
    if (key === undefined) return;
    await this.start(await this.lanes.release([executionId]));
    await this.refreshAhead(key);
  }

  /**
   * Starts promoted executions: records the promotion, then adds each job. A promoted id whose
   * execution is already terminal (or gone) is released at once, so the line keeps moving.
   */
  async start(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const rows = await startAdmissions(this.deps.pool, ids);
    const release: string[] = [];
    for (const row of rows) {
      const live =
        row.workflow !== null && row.executionStatus !== null && !TERMINAL.has(row.executionStatus);
      if (live && row.admissionStatus === "running")
        await this.deps.starter.enqueue(row.id, row.workflow as string);
      else if (
        !live ||
        row.admissionStatus === "done" ||
        row.admissionStatus === "failed" ||
        row.admissionStatus === null
      )
        release.push(row.id);
    }
    for (const id of release) await this.finished(id);
  }

  /** Rewrites the `ahead` count of every execution still waiting for `key`. */
  async refreshAhead(key: string): Promise<void> {
    await refreshAhead(this.deps.pool, key);
  }
}

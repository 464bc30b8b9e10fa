import { randomUUID } from "node:crypto";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import { startRepeatingTask } from "../transport/repeating-task.js";
import type { KeyedLanes, LaneItem } from "./keyed-lanes.js";
import { entityLane } from "./keyed-names.js";
import type { KeyedWorkflowGate } from "./keyed-workflow-gate.js";
import { inspectAdmissions, pageForRepair, unadmittedExecutions } from "./store/pg-keyed-commands.js";

export interface KeyedRepairOptions {
  pool: Pool;
  entityLanes: KeyedLanes;
  gate: KeyedWorkflowGate;
  logger: Logger;
  /** Work younger than this is left alone (its sender may still be enqueueing it), in ms. */
  graceMs: number;
  /** Key limit of a workflow's executions, for admissions the repair writes itself. */
  workflowKeyLimit: (workflow: string) => number;
}

export interface KeyedRepairReport {
  rebuilt: number;
  ensured: number;
  requeued: number;
  admitted: number;
  released: number;
  restarted: number;
}

const PAGE = 500;
/** Rows re-offered to Redis per pass; the cursor continues from there on the next pass. */
const ENSURE_PER_PASS = 5_000;
const REBUILD_LOCK_MS = 60_000;

/**
 * The convergent repair of keyed serialization (docs/keyed.md). PostgreSQL is the truth; each pass
 * makes Redis agree with it and leaves what it could not fix for the next pass:
 * - a space Redis lost (FLUSHALL, a new server) is rebuilt from PostgreSQL in seq order, under a
 *   short lock, before live enqueues are accepted again;
 * - queued commands Redis does not know (a sender died between commit and enqueue) are added;
 * - entity commands whose lease expired (their runner died) go back to the ready list;
 * - keyed workflows: executions never admitted are admitted, promoted ones whose start was not
 *   recorded are started, and slots of executions that are terminal are released.
 * Every step is idempotent, so all runners may repair at once.
 */
export class KeyedRepair {
  private readonly owner = randomUUID();
  private cursors = { entities: "0", workflows: "0" };

  constructor(private readonly options: KeyedRepairOptions) {}

  async pass(): Promise<KeyedRepairReport> {
    const report: KeyedRepairReport = {
      rebuilt: 0,
      ensured: 0,
      requeued: 0,
      admitted: 0,
      released: 0,
      restarted: 0,
    };
    const { entityLanes, gate } = this.options;
    report.rebuilt += await this.rebuildIfLost(entityLanes, false);
    report.requeued += await entityLanes.requeueExpired();
    report.ensured += await this.ensureQueued(entityLanes, false);
    report.rebuilt += await this.rebuildIfLost(gate.lanes, true);
    report.admitted += await this.admitOrphans();
    report.ensured += await this.ensureQueued(gate.lanes, true);
    const judged = await this.judgeAdmissions();
    report.released += judged.released;
    report.restarted += judged.restarted;
    const { ensured: _offered, ...repaired } = report;
    if (Object.values(repaired).some((n) => n > 0))
      this.options.logger.warn("keyed repair changed Redis", { ...report });
    return report;
  }

  private async rebuildIfLost(lanes: KeyedLanes, workflows: boolean): Promise<number> {
    if (await lanes.isWhole()) return 0;
    if (!(await lanes.tryRebuildLock(this.owner, REBUILD_LOCK_MS))) return 0;
    try {
      let count = 0;
      // Keyed workflows that already started hold their slot first, so a queued one cannot join them.
      if (workflows) count += await this.replay(lanes, true, ["running"], "rebuild", 0);
      count += await this.replay(lanes, workflows, ["queued"], "rebuild", 0);
      await lanes.markWhole();
      // A fresh Redis (first start, new prefix) has nothing to rebuild: only a real loss is a
      // warning, and only a real loss says "lost".
      if (count > 0) {
        this.options.logger.warn("keyed space rebuilt from PostgreSQL after Redis lost it", {
          space: lanes.space,
          items: count,
        });
      } else {
        this.options.logger.info("keyed space initialised in Redis; PostgreSQL had nothing to rebuild", {
          space: lanes.space,
        });
      }
      return count;
    } finally {
      await lanes.releaseRebuildLock(this.owner);
    }
  }

  /** Offers queued rows older than the grace period to Redis again (known ones are left as they are). */
  private async ensureQueued(lanes: KeyedLanes, workflows: boolean): Promise<number> {
    if (!(await lanes.isWhole())) return 0;
    const space = workflows ? "workflows" : "entities";
    const offered = await this.replay(lanes, workflows, ["queued"], "live", this.options.graceMs, space);
    return offered;
  }

  /** Pages rows of one space in seq order into Redis; returns how many were offered. */
  private async replay(
    lanes: KeyedLanes,
    workflows: boolean,
    statuses: string[],
    mode: "live" | "rebuild",
    graceMs: number,
    cursorOf?: "entities" | "workflows",
  ): Promise<number> {
    let after = cursorOf ? this.cursors[cursorOf] : "0";
    let offered = 0;
    const budget = cursorOf ? ENSURE_PER_PASS : Number.POSITIVE_INFINITY;
    while (offered < budget) {
      const rows = await pageForRepair(this.options.pool, {
        statuses,
        workflows,
        afterSeq: after,
        graceMs,
        limit: PAGE,
      });
      if (rows.length === 0) {
        after = "0";
        break;
      }
      after = rows[rows.length - 1]?.seq ?? after;
      const items: LaneItem[] = rows.map((row) => ({
        id: row.id,
        lane: workflows ? row.key : entityLane(row.entity, row.key),
        seq: row.seq,
        limit: row.keyLimit,
        inFlight: row.status === "running",
      }));
      const { lost, promoted } = await lanes.enqueue(items, mode);
      if (lost) break;
      if (workflows) await this.options.gate.start(promoted);
      offered += rows.length;
      if (rows.length < PAGE) {
        after = "0";
        break;
      }
    }
    if (cursorOf) this.cursors[cursorOf] = after;
    return offered;
  }

  /** Keyed executions whose admission row was never written: admit them now. */
  private async admitOrphans(): Promise<number> {
    if (!(await this.options.gate.lanes.isWhole())) return 0;
    const rows = await unadmittedExecutions(this.options.pool, this.options.graceMs, PAGE);
    for (const row of rows) {
      await this.options.gate.admit({
        executionId: row.id,
        workflow: row.workflow,
        key: row.key,
        limit: this.options.workflowKeyLimit(row.workflow),
      });
    }
    return rows.length;
  }

  /** In-flight admissions held for a while: start the unstarted, release the finished. */
  private async judgeAdmissions(): Promise<{ released: number; restarted: number }> {
    const { gate, pool, graceMs } = this.options;
    const ids = await gate.lanes.inFlightOlderThan(graceMs);
    if (ids.length === 0) return { released: 0, restarted: 0 };
    const rows = await inspectAdmissions(pool, ids);
    let released = 0;
    let restarted = 0;
    for (const row of rows) {
      const terminal =
        row.executionStatus === null ||
        row.executionStatus === "completed" ||
        row.executionStatus === "failed";
      if (row.admissionStatus === "queued" && !terminal) {
        await gate.start([row.id]);
        restarted++;
      } else if (terminal || row.admissionStatus !== "running") {
        await gate.finished(row.id);
        released++;
      }
    }
    return { released, restarted };
  }
}

/** Runs repair passes every `intervalMs` until stopped; a failed pass is logged and the next retries. */
export function startKeyedRepairLoop(
  repair: KeyedRepair,
  intervalMs: number,
  logger: Logger,
): { stop(): Promise<void> } {
  return startRepeatingTask(
    intervalMs,
    () => repair.pass(),
    (error) => logger.warn("keyed repair pass failed; the next pass retries", { error: error.message }),
  );
}

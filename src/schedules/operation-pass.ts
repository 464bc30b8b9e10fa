import { ENGINE_ERRORS } from "../engine/error-codes.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import type { Logger } from "../observability/logger.js";
import type { ExecutionQueue } from "../runtime/execution-queue.js";
import type { PgExecutionCommands } from "../store/pg-execution-commands.js";
import type { PgExecutionQueries } from "../store/pg-execution-queries.js";
import type {
  ItemOutcome,
  OperationItem,
  OperationRecord,
  OperationTarget,
  PgOperations,
} from "../store/pg-operations.js";
import { resetToNewestVersion } from "./operation-reset.js";

export interface OperationPassDeps {
  operations: PgOperations;
  /** Cancel, resume, pause and reset, as the API's single-run commands leave them. */
  commands: PgExecutionCommands;
  /** Signal intake. */
  signals: Pick<PgExecutionQueries, "insertSignal">;
  queue: Pick<ExecutionQueue, "wake">;
  /** The workflows this runner registers: a signal's schema, and the version a reset moves a run to. */
  workflows: WorkflowRegistry;
  logger: Logger;
  /** Runs one batch acts on before their outcomes are recorded together. */
  batchSize: number;
  /** A pass takes up batches until this long has gone by, then leaves the rest to the next tick. */
  budgetMs: number;
}

export interface OperationPassReport {
  batches: number;
  items: number;
  finished: string[];
}

/**
 * One tick of the runners' bulk-operation schedule: takes up the oldest running operation, applies
 * its action to its pending runs in batches of `batchSize` until none is left or the budget is
 * spent, and ends an operation whose abort was asked for (docs/console.md, "Bulk operations").
 *
 * A crash between a batch's actions and its record leaves those items attempted but pending; the
 * next pass applies the action to them again. Every action is safe to repeat: a cancel keeps the
 * first request, a signal and a reset carry the operation's idempotency key, a pause keeps the
 * first pause, and a resume or an unpause that finds the run no longer suspended or paused on a
 * retried item counts it done — the interrupted pass did it.
 */
export async function runOperationPass(deps: OperationPassDeps): Promise<OperationPassReport> {
  const { operations } = deps;
  const report: OperationPassReport = { batches: 0, items: 0, finished: [] };
  const deadline = Date.now() + deps.budgetMs;
  while (Date.now() < deadline) {
    const operation = await operations.nextRunning();
    if (!operation) break;
    if (operation.abortRequestedAt !== null) {
      await operations.finishAborted(operation.id);
      report.finished.push(operation.id);
      continue;
    }
    const batch = await operations.takeBatch(operation.id, deps.batchSize);
    const outcomes = await applyBatch(deps, operation, batch);
    const after = await operations.recordBatch(operation.id, outcomes);
    report.batches += 1;
    report.items += batch.length;
    if (after.status !== "running") report.finished.push(operation.id);
    deps.logger.info("bulk operation batch", {
      operationId: operation.id,
      action: operation.action,
      items: batch.length,
      succeeded: after.succeeded,
      failed: after.failed,
      total: after.total,
    });
  }
  return report;
}

/** Runs of a batch acted on at once. */
const ITEMS_IN_FLIGHT = 8;

/** Applies the operation's action to each item; an item's refusal is its outcome, never the batch's. */
async function applyBatch(
  deps: OperationPassDeps,
  operation: OperationRecord,
  batch: readonly OperationItem[],
): Promise<ItemOutcome[]> {
  const rows = await deps.operations.targets(
    operation.orgId,
    batch.map((i) => i.executionId),
  );
  const targets = new Map(rows.map((r) => [r.id, r]));
  const outcomes: ItemOutcome[] = [];
  let next = 0;
  let cut: Error | null = null;
  // A few runs at a time: each action is a round trip or two to PostgreSQL and one to Redis, and
  // the runner's pool also serves its turns.
  const lane = async () => {
    while (cut === null && next < batch.length) {
      const item = batch[next++] as OperationItem;
      const target = targets.get(item.executionId);
      if (!target) {
        outcomes.push(
          failed(item, ENGINE_ERRORS.EXECUTION_NOT_FOUND, "the run no longer exists (retention)"),
        );
        continue;
      }
      try {
        outcomes.push(await applyOne(deps, operation, item, target));
      } catch (error) {
        // A database or Redis failure: the batch stops taking up runs; the ones not recorded stay
        // pending (attempted), and the next pass applies the action to them again.
        cut = error as Error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(ITEMS_IN_FLIGHT, batch.length) }, lane));
  if (cut !== null) {
    if (outcomes.length === 0) throw cut;
    deps.logger.warn("bulk operation batch cut short", {
      operationId: operation.id,
      error: (cut as Error).message,
    });
  }
  return outcomes;
}

async function applyOne(
  deps: OperationPassDeps,
  operation: OperationRecord,
  item: OperationItem,
  target: OperationTarget,
): Promise<ItemOutcome> {
  const ok: ItemOutcome = { executionId: item.executionId, outcome: "succeeded" };
  switch (operation.action) {
    case "cancel": {
      const result = await deps.commands.cancel(operation.orgId, target.id, {
        by: operation.createdBy,
        reason: operation.params.reason ?? null,
      });
      if (!result) return failed(item, ENGINE_ERRORS.EXECUTION_NOT_FOUND, "the run no longer exists");
      // Already cancelled (by this operation's interrupted pass or before): what was asked holds.
      if (!result.marked && result.cancelRequestedAt !== null) return ok;
      if (!result.marked) return terminal(item, result.status, "cancel");
      for (const execution of result.executions) await deps.queue.wake(execution.id, execution.workflow);
      return ok;
    }
    case "resume": {
      const result = await deps.commands.resume(operation.orgId, target.id);
      if (result.kind === "not-found")
        return failed(item, ENGINE_ERRORS.EXECUTION_NOT_FOUND, "the run no longer exists");
      if (result.kind === "not-suspended") {
        if (item.attempted) return ok;
        return failed(
          item,
          ENGINE_ERRORS.EXECUTION_NOT_SUSPENDED,
          `the run is ${result.status}; only a suspended or held run can be resumed`,
        );
      }
      await deps.queue.wake(target.id, result.workflow);
      return ok;
    }
    case "pause": {
      const result = await deps.commands.pause(operation.orgId, target.id, {
        at: new Date().toISOString(),
        by: operation.createdBy,
        reason: operation.params.reason ?? null,
      });
      if (result.kind === "not-found")
        return failed(item, ENGINE_ERRORS.EXECUTION_NOT_FOUND, "the run no longer exists");
      if (result.kind === "terminal") return terminal(item, result.status, "pause");
      if (result.wake) await deps.queue.wake(target.id, result.workflow);
      return ok;
    }
    case "unpause": {
      const result = await deps.commands.unpause(operation.orgId, target.id);
      if (result.kind === "not-found")
        return failed(item, ENGINE_ERRORS.EXECUTION_NOT_FOUND, "the run no longer exists");
      if (result.kind === "terminal") return terminal(item, result.status, "unpause");
      if (result.kind === "not-paused") {
        if (item.attempted) return ok;
        return failed(
          item,
          ENGINE_ERRORS.EXECUTION_NOT_PAUSED,
          `the run is ${result.status} and not paused; only a paused run can be unpaused`,
        );
      }
      if (result.wake) await deps.queue.wake(target.id, result.workflow);
      return ok;
    }
    case "reset-to-version":
      return resetToNewestVersion(deps, operation, target);
    case "signal": {
      const signal = operation.params.signal;
      if (!signal) throw new Error(`operation ${operation.id} is a signal without one`);
      if (target.status === "completed" || target.status === "failed")
        return terminal(item, target.status, `signal ${signal.name}`);
      const schema = deps.workflows.has(target.workflow)
        ? deps.workflows.get(target.workflow).signals?.[signal.name]
        : undefined;
      const parsed = schema?.safeParse(signal.payload);
      if (parsed && !parsed.success) {
        return failed(
          item,
          ENGINE_ERRORS.SIGNAL_INVALID,
          `signal ${signal.name} of ${target.workflow} is invalid: ${parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`,
        );
      }
      await deps.signals.insertSignal(
        target.id,
        signal.name,
        signal.payload,
        `operation:${operation.id}`,
        operation.createdBy,
      );
      await deps.queue.wake(target.id, target.workflow);
      return ok;
    }
  }
}

function failed(item: OperationItem, code: string, message: string): ItemOutcome {
  return { executionId: item.executionId, outcome: "failed", code, message };
}

function terminal(item: OperationItem, status: string, what: string): ItemOutcome {
  return failed(item, ENGINE_ERRORS.EXECUTION_TERMINAL, `the run is ${status}; there is nothing to ${what}`);
}

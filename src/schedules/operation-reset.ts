import { canonicalHash } from "../engine/canonical-json.js";
import { ENGINE_ERRORS } from "../engine/error-codes.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import { replayableEnd, resetPrefixRefusal } from "../engine/reset-check.js";
import type { ExecutionQueue } from "../runtime/execution-queue.js";
import type { PgExecutionCommands } from "../store/pg-execution-commands.js";
import type { ItemOutcome, OperationRecord, OperationTarget } from "../store/pg-operations.js";

export interface OperationResetDeps {
  commands: Pick<PgExecutionCommands, "reset">;
  queue: Pick<ExecutionQueue, "wake">;
  /** The workflows this runner registers: the run moves to the newest version of its workflow here. */
  workflows: WorkflowRegistry;
}

/**
 * A bulk `reset-to-version` on one run (docs/engine.md, "Reset"): the single reset, moving the run
 * onto the newest version of its workflow this runner registers, from the first journal position
 * that version does not replay (the journal's length when it replays all of it). A refusal is the
 * item's failure, with the single reset's code.
 *
 * Safe on repeat: the reset carries the idempotency key `operation:<operation id>` (unique per run,
 * as a reset's key is), so a pass retrying an item whose reset committed before its crash finds
 * that reset and counts the item done, without a second reset. The request hash leaves the
 * position out: a retry picks it again from a journal the first reset already changed.
 */
export async function resetToNewestVersion(
  deps: OperationResetDeps,
  operation: OperationRecord,
  target: OperationTarget,
): Promise<ItemOutcome> {
  const reason = operation.params.reason ?? null;
  const result = await deps.commands.reset({
    orgId: operation.orgId,
    executionId: target.id,
    position: (run, toVersion, journal) => replayableEnd(deps.workflows, run, toVersion, journal),
    reason,
    actor: operation.createdBy,
    idempotencyKey: `operation:${operation.id}`,
    requestHash: canonicalHash({ action: "reset-to-version", operationId: operation.id, reason }),
    newestVersion: (workflow) => deps.workflows.versions(workflow).at(-1) ?? null,
    replays: (run, toVersion, prefix) => resetPrefixRefusal(deps.workflows, run, toVersion, prefix),
  });
  if (result.kind === "not-found") {
    return {
      executionId: target.id,
      outcome: "failed",
      code: ENGINE_ERRORS.EXECUTION_NOT_FOUND,
      message: "the run no longer exists",
    };
  }
  if (result.kind === "refused") {
    const { code, message } = result.refusal;
    return { executionId: target.id, outcome: "failed", code, message };
  }
  if (result.wake) await deps.queue.wake(target.id, result.workflow);
  return { executionId: target.id, outcome: "succeeded" };
}

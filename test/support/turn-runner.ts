import type { ChildDispatcher } from "../../src/engine/context.js";
import type { ExecutionStore } from "../../src/engine/execution-store.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { TurnRunner } from "../../src/engine/turn-runner.js";
import type { AnyWorkflow } from "../../src/engine/workflow.js";
import { createLogger } from "../../src/observability/logger.js";

/** A dispatcher for workflows that start no children and no activities. */
export const noDispatch: ChildDispatcher = {
  dispatchChild: () => Promise.reject(new Error("no children here")),
  dispatchActivity: () => Promise.reject(new Error("no activities here")),
};

/** A TurnRunner on `store` without any queue: the test takes each turn itself (`runner.run(id)`). */
export function directTurnRunner(store: ExecutionStore, workflows: readonly AnyWorkflow[]): TurnRunner {
  return new TurnRunner({
    store,
    registry: new WorkflowRegistry(workflows),
    dispatcher: noDispatch,
    recovery: { maxAttempts: 3, maxDurationMs: 60_000, baseDelayMs: 10, maxDelayMs: 10 },
    logger: createLogger({ level: "error" }),
  });
}

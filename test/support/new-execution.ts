import { randomUUID } from "node:crypto";
import type { NewExecution } from "../../src/engine/execution-store.js";

/** A top-level execution row to insert with `store.createExecution` directly: no key, no parent. */
export function newExecution(
  overrides: Partial<NewExecution> & Pick<NewExecution, "workflow">,
): NewExecution {
  return {
    id: randomUUID(),
    workflowVersion: 1,
    orgId: "default",
    input: {},
    key: null,
    idempotencyKey: null,
    requestHash: null,
    parentId: null,
    parentPosition: null,
    ...overrides,
  };
}

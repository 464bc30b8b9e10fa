import { createHash } from "node:crypto";
import { z } from "zod";
import { ChildWorkflowError } from "./errors.js";
import type { JournalCursor } from "./journal-cursor.js";
import { StopSignal } from "./turn-stop.js";
import type { WorkflowDefinition } from "./workflow.js";

/** Child workflows of a WorkflowContext. */

export async function runChild<I, O>(
  cursor: JournalCursor,
  workflow: WorkflowDefinition<I, O>,
  input: I,
): Promise<O> {
  const { position, entry } = cursor.claim("child", workflow.name);
  const childId = entry
    ? (entry.result as { childId: string }).childId
    : childExecutionId(cursor.executionId, position);
  if (entry?.state === "ok") return workflow.output.parse((entry.result as { output: unknown }).output) as O;
  if (entry?.state === "error" && entry.error) throw new ChildWorkflowError(childId, entry.error);
  if (!entry) {
    const result = { childId, workflow: workflow.name };
    await cursor.append({
      position,
      kind: "child",
      name: workflow.name,
      state: "pending",
      result,
      error: null,
      attempts: 1,
    });
  }
  let summary = await cursor.deps.store.getSummary(childId);
  if (!summary) {
    const created = await cursor.write("child execution", () =>
      cursor.deps.store.createExecution(
        {
          id: childId,
          workflow: workflow.name,
          workflowVersion: workflow.version,
          orgId: cursor.deps.orgId,
          input: z.encode(workflow.input, input),
          key: null,
          idempotencyKey: null,
          requestHash: null,
          parentId: cursor.executionId,
          parentPosition: position,
        },
        cursor.deps.fence,
      ),
    );
    summary = created.summary;
  }
  if (summary.status === "completed") {
    const result = { childId, workflow: workflow.name, output: summary.output };
    await cursor.resolve(position, "ok", result, null);
    return workflow.output.parse(summary.output) as O;
  }
  if (summary.status === "failed" && summary.failure) {
    await cursor.resolve(position, "error", { childId, workflow: workflow.name }, summary.failure);
    throw new ChildWorkflowError(childId, summary.failure);
  }
  await cursor.write("child dispatch", () =>
    cursor.deps.dispatcher.dispatchChild({ id: childId, workflow: workflow.name }, cursor.executionId),
  );
  cursor.stop.park({ kind: "child", name: workflow.name, position, details: { childId } }, null, {
    child: true,
  });
  throw new StopSignal();
}
/** Deterministic child id: the same parent position always names the same child. */
export function childExecutionId(parentId: string, position: number): string {
  // A UUID (version 8, "custom") from the first 16 bytes of SHA-256(parent id / position).
  const bytes = createHash("sha256").update(`${parentId}/${position}`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const h = bytes.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

import { createHash } from "node:crypto";
import { z } from "zod";
import type { ChildWorkflow } from "./context-types.js";
import { assertStorable, ChildWorkflowError } from "./errors.js";
import type { JournalCursor } from "./journal-cursor.js";

/** Child workflows of a WorkflowContext. */

export async function runChild<I, O>(
  cursor: JournalCursor,
  workflow: ChildWorkflow<I, O>,
  input: I,
): Promise<O> {
  // Encoded and checked before the position is taken (see runActivity).
  const encodedInput = z.encode(workflow.input, input);
  assertStorable(
    `the input of child workflow "${workflow.name}"`,
    encodedInput,
    undefined,
    cursor.maxStoredValueBytes,
    {
      workflow: workflow.name,
    },
  );
  const { position, cause, entry } = cursor.claim("child", workflow.name);
  const childId = entry
    ? (entry.result as { childId: string }).childId
    : childExecutionId(cursor.executionId, position);
  if (entry?.state === "ok") {
    return cursor.replay(
      entry,
      () => workflow.output.parse((entry.result as { output: unknown }).output) as O,
    );
  }
  if (entry?.state === "error" && entry.error) {
    const failure = entry.error;
    return cursor.replay(entry, () => {
      throw new ChildWorkflowError(childId, failure);
    });
  }
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
      seq: null,
      cause,
    });
  }
  // Through `write` like every store call of a turn: a dropped connection retries, then suspends,
  // and never reaches the body as if the workflow's own code had thrown. A position new in this
  // turn has no child yet (the child row follows its pending entry), so it is not looked up.
  let summary = entry
    ? await cursor.write("child lookup", () => cursor.deps.store.getSummary(childId))
    : null;
  if (!summary) {
    const created = await cursor.write("child execution", () =>
      cursor.deps.store.createExecution(
        {
          id: childId,
          workflow: workflow.name,
          workflowVersion: workflow.version,
          orgId: cursor.deps.orgId,
          input: encodedInput,
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
    const output = summary.output;
    const result = { childId, workflow: workflow.name, output };
    return cursor.commit(
      (seq) => cursor.resolve(position, seq, "ok", result, null),
      () => workflow.output.parse(output) as O,
    );
  }
  if (summary.status === "failed" && summary.failure) {
    const failure = summary.failure;
    return cursor.commit(
      (seq) => cursor.resolve(position, seq, "error", { childId, workflow: workflow.name }, failure),
      () => {
        throw new ChildWorkflowError(childId, failure);
      },
    );
  }
  // A child an earlier turn dispatched before parking cleanly has its job; only a turn after one
  // that ended otherwise (a runner killed between the child's row and its job) dispatches it again.
  // A job Redis lost since is the sweep's to add back (docs/engine.md, "Redis is not the ledger").
  if (!entry || !cursor.deps.afterCleanPark) {
    await cursor.deps.hooks.beforeChildDispatch?.({ executionId: cursor.executionId, childId, position });
    await cursor.write("child dispatch", () =>
      cursor.deps.dispatcher.dispatchChild({ id: childId, workflow: workflow.name }, cursor.executionId),
    );
  }
  cursor.stop.park({ kind: "child", name: workflow.name, position, details: { childId } }, null, {
    child: true,
  });
  return cursor.parked();
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

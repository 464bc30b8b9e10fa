import { context, propagation, ROOT_CONTEXT, type SpanContext, SpanKind, trace } from "@opentelemetry/api";
import type { Pool } from "pg";

/**
 * An execution's trace context lives in its row (`executions.traceparent`), not in a process:
 * every turn, step and activity, on whichever runner and after any crash, joins the trace through
 * it (docs/operations.md, "Traces").
 */

const tracer = () => trace.getTracer("tenor");

/**
 * Starts and ends the span that stands for a new execution, as a child of the active context (the
 * API request, or the parent's turn for a child execution), and returns its W3C traceparent. Null
 * when tracing is off: the no-op tracer gives an invalid context, and nothing is stored. The span
 * ends at once so it is exported even if no runner ever picks the execution up.
 */
export function newExecutionTraceparent(workflow: string, executionId: string): string | null {
  const span = tracer().startSpan(`execution ${workflow}`, {
    kind: SpanKind.PRODUCER,
    attributes: { "tenor.workflow": workflow, "tenor.execution.id": executionId },
  });
  span.end();
  return traceparentOfSpan(span.spanContext());
}

/** The execution span's context as a parent for spans of a later turn or activity. */
export function executionContext(traceparent: string) {
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

function traceparentOfSpan(spanContext: SpanContext): string | null {
  if (!trace.isSpanContextValid(spanContext)) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpanContext(context.active(), spanContext), carrier);
  return carrier.traceparent ?? null;
}

/** The stored traceparent and workflow of an execution (null traceparent: started untraced). */
export async function loadExecutionTrace(
  pool: Pool,
  executionId: string,
): Promise<{ workflow: string; traceparent: string | null } | null> {
  const { rows } = await pool.query<{ workflow: string; traceparent: string | null }>(
    "SELECT workflow, traceparent FROM executions WHERE id = $1",
    [executionId],
  );
  return rows[0] ?? null;
}

/**
 * Gives an execution started while tracing was off a trace of its own; when two runners race,
 * the first stored value wins and both use it.
 */
export async function adoptExecutionTrace(
  pool: Pool,
  executionId: string,
  workflow: string,
): Promise<string | null> {
  const traceparent = newExecutionTraceparent(workflow, executionId);
  if (traceparent === null) return null;
  const { rows } = await pool.query<{ traceparent: string | null }>(
    "UPDATE executions SET traceparent = COALESCE(traceparent, $2) WHERE id = $1 RETURNING traceparent",
    [executionId, traceparent],
  );
  return rows[0]?.traceparent ?? null;
}

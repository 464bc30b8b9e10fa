import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Pool } from "pg";
import type { EngineHooks } from "../engine/context.js";
import type { TurnOutcome } from "../engine/turn-runner.js";
import { TENOR_TRACER } from "../observability/tracing-state.js";
import { adoptExecutionTrace, executionContext, loadExecutionTrace } from "../store/execution-trace.js";

/**
 * Spans of an execution's turns, steps and activities (docs/operations.md, "Traces").
 *
 * Each is a child of the execution's span, whose traceparent PostgreSQL keeps with the execution:
 * a turn on another runner, after a restart or a kill -9, joins the same trace. Turns, steps and
 * activities are siblings under it rather than nested in the turn, so a runner killed mid-turn
 * (its turn span is never exported) leaves no span without its parent. Library spans made during
 * a turn or an activity (pg, BullMQ) parent to the execution span too. A child execution's span
 * is a child of its parent's execution span (src/store/execution-trace.ts).
 *
 * Turn spans come from wrapping the transport's call into the engine; step spans from the engine
 * hooks `beforeStep` and `beforeCheckpoint` (a step that did not checkpoint in its turn ends with
 * an error status when the turn ends).
 */
export class ExecutionTracing {
  private readonly tracer = trace.getTracer(TENOR_TRACER);
  /** Open step spans by execution, then position. */
  private readonly steps = new Map<string, Map<number, Span>>();

  constructor(private readonly pool: Pool) {}

  /** Runs one turn inside the execution's trace, under a `turn <workflow>` span. */
  async runTurn(executionId: string, run: () => Promise<TurnOutcome>): Promise<TurnOutcome> {
    const parent = await this.contextOf(executionId);
    if (!parent) return run();
    const span = this.tracer.startSpan(
      `turn ${parent.workflow}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: { "tenor.execution.id": executionId, "tenor.workflow": parent.workflow },
      },
      parent.context,
    );
    try {
      const outcome = await context.with(parent.context, run);
      span.setAttribute("tenor.turn.outcome", outcome.kind);
      if (outcome.kind === "parked") {
        span.addEvent("parked", {
          ...(outcome.wakeAt !== null ? { "tenor.wake_at": new Date(outcome.wakeAt).toISOString() } : {}),
          "tenor.waits_for_child": outcome.waitsForChild,
          "tenor.signals": outcome.signalNames,
        });
      }
      if (outcome.kind === "failed")
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.failure.code });
      return outcome;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      this.endOpenSteps(executionId);
      span.end();
    }
  }

  /** Runs one activity job inside the execution's trace, under an `activity <name>` span. */
  async runActivity<T>(
    job: { executionId: string; position: number; activity: string },
    run: () => Promise<T>,
  ): Promise<T> {
    const parent = await this.contextOf(job.executionId);
    if (!parent) return run();
    const span = this.tracer.startSpan(
      `activity ${job.activity}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          "tenor.execution.id": job.executionId,
          "tenor.workflow": parent.workflow,
          "tenor.activity": job.activity,
          "tenor.position": job.position,
        },
      },
      parent.context,
    );
    try {
      return await context.with(parent.context, run);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  }

  /** Engine hooks that open and close step spans, around `inner` (which runs first). */
  hooks(inner: EngineHooks = {}): EngineHooks {
    return {
      ...inner,
      beforeStep: async (info) => {
        await inner.beforeStep?.(info);
        const span = this.tracer.startSpan(`step ${info.step}`, {
          attributes: {
            "tenor.execution.id": info.executionId,
            "tenor.step": info.step,
            "tenor.position": info.position,
          },
        });
        const open = this.steps.get(info.executionId) ?? new Map<number, Span>();
        open.get(info.position)?.end();
        open.set(info.position, span);
        this.steps.set(info.executionId, open);
      },
      beforeCheckpoint: async (info) => {
        const span = this.steps.get(info.executionId)?.get(info.position);
        if (span) {
          span.setAttribute("tenor.step.duration_ms", info.durationMs);
          span.end();
          this.steps.get(info.executionId)?.delete(info.position);
        }
        await inner.beforeCheckpoint?.(info);
      },
    };
  }

  private endOpenSteps(executionId: string): void {
    const open = this.steps.get(executionId);
    if (!open) return;
    for (const span of open.values()) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: "the step did not checkpoint in this turn" });
      span.end();
    }
    this.steps.delete(executionId);
  }

  private async contextOf(executionId: string): Promise<{ workflow: string; context: Context } | null> {
    const row = await loadExecutionTrace(this.pool, executionId);
    if (!row) return null;
    const traceparent = row.traceparent ?? (await adoptExecutionTrace(this.pool, executionId, row.workflow));
    return traceparent ? { workflow: row.workflow, context: executionContext(traceparent) } : null;
  }
}

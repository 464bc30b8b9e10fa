import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import type { Telemetry } from "bullmq";
import { BullMQOTelSpan, BullMQOtel } from "bullmq-otel";
import { isTracingEnabled } from "../observability/tracing-state.js";

/**
 * BullMQ operations that run on timers in every worker, outside any execution: the stalled-job
 * check and the fetch loop. Traced, each would be a trace of its own every few seconds (86 of 94
 * traces in a sample were stalled checks); the operations that carry work (add, process, move)
 * stay traced and join their execution's trace.
 */
export const BACKGROUND_OPERATIONS: ReadonlySet<string> = new Set([
  "startStalledCheckTimer",
  "moveStalledJobsToWait",
  "getNextJob",
  "rateLimit",
]);

/**
 * BullMQ's own spans through its `telemetry` option, only when this process traces (without an SDK
 * they would cost a context injection per job for nothing), without the background operations
 * above: their spans are non-recording, so nothing is exported for them. Spread into a Queue's or
 * Worker's options; read when the queue or worker is built.
 */
export function bullmqTelemetry(): { telemetry?: Telemetry } {
  if (!isTracingEnabled()) return {};
  const otel = new BullMQOtel({ tracerName: "bullmq" });
  return {
    telemetry: {
      ...otel,
      contextManager: otel.contextManager,
      tracer: {
        // BullMQ names a span `<operation> <queue>`.
        startSpan: (name, options, context) =>
          BACKGROUND_OPERATIONS.has(name.split(" ")[0] ?? "")
            ? new BullMQOTelSpan(trace.wrapSpanContext(INVALID_SPAN_CONTEXT))
            : otel.tracer.startSpan(name, options, context),
      },
    },
  };
}

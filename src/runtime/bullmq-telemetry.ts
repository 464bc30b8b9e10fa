import { BullMQOtel } from "bullmq-otel";
import { isTracingEnabled } from "../observability/tracing-state.js";

/**
 * BullMQ's own spans (add, process, move) through its `telemetry` option, only when this process
 * traces: without an SDK they would cost a context injection per job for nothing. Spread into a
 * Queue's or Worker's options; read when the queue or worker is built.
 */
export function bullmqTelemetry(): { telemetry?: BullMQOtel } {
  return isTracingEnabled() ? { telemetry: new BullMQOtel({ tracerName: "bullmq" }) } : {};
}

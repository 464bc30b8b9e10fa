import { context, trace } from "@opentelemetry/api";
import { node } from "@opentelemetry/sdk-node";
import { describe, expect, it } from "vitest";
import { setTracingEnabled } from "../../src/observability/tracing-state.js";
import { bullmqTelemetry } from "../../src/runtime/bullmq-telemetry.js";

describe("BullMQ's spans", () => {
  it("records the operations that carry work and none of the background maintenance", async () => {
    const exporter = new node.InMemorySpanExporter();
    const provider = new node.NodeTracerProvider({
      spanProcessors: [new node.SimpleSpanProcessor(exporter)],
    });
    provider.register();
    setTracingEnabled(true);
    try {
      const { telemetry } = bullmqTelemetry();
      for (const name of [
        "moveStalledJobsToWait executions",
        "startStalledCheckTimer executions",
        "getNextJob executions",
        "process executions",
        "add executions",
      ]) {
        const span = telemetry!.tracer.startSpan(name, { kind: 0 });
        span.end();
      }
      expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual([
        "process executions",
        "add executions",
      ]);
    } finally {
      setTracingEnabled(false);
      await provider.shutdown();
      trace.disable();
      context.disable();
    }
  });
});

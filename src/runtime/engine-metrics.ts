import type { EngineHooks } from "../engine/context.js";
import type { TenorMetrics } from "../observability/metrics.js";

/** Turn outcomes that end an execution, and the status each finishes with. */
const TERMINAL_OUTCOMES: Readonly<Record<string, string>> = { completed: "completed", failed: "failed" };

/**
 * Engine hooks that feed the runner's metrics: turn durations by workflow and outcome, step
 * durations by workflow, executions finished by workflow and status. Composes with `inner`
 * (hooks a test passes), which runs first.
 */
export function engineMetricsHooks(metrics: TenorMetrics, inner: EngineHooks = {}): EngineHooks {
  // Step hooks know the execution, not its workflow: remember it for the turn's duration.
  const workflows = new Map<string, string>();
  return {
    async beforeCheckpoint(info) {
      await inner.beforeCheckpoint?.(info);
      const workflow = workflows.get(info.executionId);
      if (workflow !== undefined) metrics.stepDuration.observe({ workflow }, info.durationMs / 1000);
    },
    turnStarted(info) {
      inner.turnStarted?.(info);
      workflows.set(info.executionId, info.workflow);
    },
    turnEnded(info) {
      inner.turnEnded?.(info);
      workflows.delete(info.executionId);
      metrics.turnDuration.observe(
        { workflow: info.workflow, outcome: info.outcome },
        info.durationMs / 1000,
      );
      const status = TERMINAL_OUTCOMES[info.outcome];
      if (status !== undefined) metrics.executionsFinished.inc({ workflow: info.workflow, status });
    },
  };
}

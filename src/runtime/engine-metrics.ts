import type { EngineHooks } from "../engine/context.js";
import type { TenorMetrics } from "../observability/metrics.js";

/**
 * Step names labelled per workflow. Names are free strings in workflow code, so a name built from
 * data (`pay ${holder}`) would grow a series per value: past this many, a workflow's further step
 * names are reported as `other`, keeping the series bounded.
 */
export const MAX_STEP_LABELS_PER_WORKFLOW = 32;

/** Turn outcomes that end an execution, and the status each finishes with. */
const TERMINAL_OUTCOMES: Readonly<Record<string, string>> = { completed: "completed", failed: "failed" };

/**
 * Engine hooks that feed the runner's metrics: turn durations by workflow and outcome, step
 * durations by workflow and (bounded) step name, executions finished by workflow and status. Composes with `inner`
 * (hooks a test passes), which runs first.
 */
export function engineMetricsHooks(metrics: TenorMetrics, inner: EngineHooks = {}): EngineHooks {
  // Step hooks know the execution, not its workflow: remember it for the turn's duration.
  const workflows = new Map<string, string>();
  const stepNames = new Map<string, Set<string>>();
  const stepLabel = (workflow: string, step: string): string => {
    const names = stepNames.get(workflow) ?? new Set<string>();
    stepNames.set(workflow, names);
    if (names.has(step)) return step;
    if (names.size >= MAX_STEP_LABELS_PER_WORKFLOW) return "other";
    names.add(step);
    return step;
  };
  return {
    async beforeCheckpoint(info) {
      await inner.beforeCheckpoint?.(info);
      const workflow = workflows.get(info.executionId);
      if (workflow === undefined) return;
      metrics.stepDuration.observe(
        { workflow, step: stepLabel(workflow, info.step) },
        info.durationMs / 1000,
      );
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

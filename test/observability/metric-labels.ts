import { ALL_WORKFLOWS } from "../../flows/index.js";
import { ORGANISATION_DEPLOYMENTS_SCHEDULE } from "../../flows/organisations/schedules/deployments-schedule.js";
import { WEBHOOK_ATTEMPT_OUTCOMES } from "../../src/observability/metrics.js";
import { FAILURE_CLASSES } from "../../src/runtime/failure-class.js";
import { SCHEDULE_NAMES } from "../../src/schedules/schedule-definition.js";

/**
 * The allow-list of Prometheus label values Tenor may export: every label name has a pattern, and
 * a label name not listed is itself a violation. Built from the code's closed lists (workflow and
 * schedule names, queue names, states), so an execution id, a key, an org id or a hash fails.
 */

const oneOf = (values: readonly string[]) =>
  new RegExp(`^(${values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})$`);

const JOB_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children", "failed"];
const EXECUTION_STATES = ["running", "waiting", "suspended", "held"];
const LANE_STATES = ["pending", "in_flight", "ready"];
const TURN_OUTCOMES = ["gone", "completed", "failed", "fenced", "parked", "suspended", "held", "error"];
const SCHEDULE_OUTCOMES = ["succeeded", "empty", "failed"];

export const LABEL_ALLOW_LIST: Readonly<Record<string, RegExp>> = {
  role: oneOf(["api", "runner", "indexer"]),
  workflow: oneOf(ALL_WORKFLOWS.map((w) => w.name)),
  status: /^(completed|failed|[1-5][0-9]{2})$/,
  outcome: oneOf([...TURN_OUTCOMES, ...SCHEDULE_OUTCOMES, ...WEBHOOK_ATTEMPT_OUTCOMES]),
  method: oneOf(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER"]),
  // Express templates: literal segments and `:param` placeholders only.
  route: /^(unmatched|\/admin\/queues|(\/([a-z][a-z0-9]*([._-][a-z][a-z0-9]*)*|:[A-Za-z]+))+)$/,
  queue: /^(executions|schedules|activity-[a-z0-9-]+)$/,
  state: oneOf([...JOB_STATES, ...EXECUTION_STATES, ...LANE_STATES]),
  // The runner's own schedules and the application's (a fixed set, named in code).
  schedule: oneOf([...Object.values(SCHEDULE_NAMES), ORGANISATION_DEPLOYMENTS_SCHEDULE]),
  // Keyed spaces (entities, workflows), and V8 heap spaces of prom-client's default metrics.
  space: /^[a-z_]+$/,
  domain: oneOf(["runner", "indexer"]),
  class: oneOf(FAILURE_CLASSES),
  activity: /^[a-z][a-z0-9]*([._-][a-z0-9]+)*$/,
  // Step names as workflow code writes them, at most 32 per workflow, then `other` (engine-metrics.ts).
  step: /^[A-Za-z][A-Za-z0-9 ._:-]{0,99}$/,
  // Configured EIP-155 chain ids (the Ledger Index gauges).
  chain_id: /^[0-9]{1,12}$/,
  reason: oneOf(["pool_queue", "event_loop_lag", "in_flight"]),
  le: /^([0-9.e+-]+|\+Inf)$/,
  // prom-client's default process metrics.
  version: /^v\d+\.\d+\.\d+$/,
  major: /^\d+$/,
  minor: /^\d+$/,
  patch: /^\d+$/,
  kind: /^(major|minor|incremental|weakcb)$/,
  type: /^[A-Za-z_]+$/,
};

/** Whatever looks like an id or a hash fails, whichever label carries it. */
const ID_LIKE = /[0-9a-f]{8}-[0-9a-f]{4}|[0-9a-f]{16,}/i;

/** One violation per sample label whose name is unknown or whose value fails its pattern. */
export function labelViolations(exposition: string, allow = LABEL_ALLOW_LIST): string[] {
  const violations: string[] = [];
  for (const line of exposition.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const open = line.indexOf("{");
    if (open < 0) continue;
    const metric = line.slice(0, open);
    const labels = line.slice(open + 1, line.lastIndexOf("}"));
    for (const match of labels.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      const [, name, value] = match as unknown as [string, string, string];
      const pattern = allow[name];
      if (pattern === undefined) violations.push(`${metric}: label ${name} is not on the allow-list`);
      else if (!pattern.test(value) || ID_LIKE.test(value)) {
        violations.push(`${metric}: ${name}="${value}" fails ${pattern} or looks like an id`);
      }
    }
  }
  return violations;
}

/** The value of the first sample of `metric` whose labels include every pair of `labels`. */
export function sampleValue(
  exposition: string,
  metric: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of exposition.split("\n")) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

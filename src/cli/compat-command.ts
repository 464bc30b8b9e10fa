import { stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Pool } from "pg";
import { type DryReplayOutcome, dryReplay, isBreaking, type JournalCall } from "../engine/dry-replay.js";
import { WorkflowRegistry } from "../engine/registry.js";
import type { AnyWorkflow } from "../engine/workflow.js";
import { inFlightExecutions } from "../store/pg-inflight.js";
import { type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { renderTable } from "./table.js";

/** Files tried, in order, when `--against` names a directory. */
const DIRECTORY_ENTRIES = ["index.ts", "index.js", "index.mjs", "flows/index.ts", "flows/index.js"];

/**
 * Loads the other build's workflows. The contract (docs/console.md, "Compatibility report"): the
 * module exports `workflows` (or `ALL_WORKFLOWS`, or a default export), a list of workflow
 * definitions as `defineWorkflow` returns them; a directory names the module at its index.
 */
export async function loadWorkflowModule(target: string): Promise<AnyWorkflow[]> {
  let file = path.resolve(target);
  const info = await stat(file).catch(() => null);
  if (!info) throw new UsageError(`--against ${JSON.stringify(target)} does not exist`);
  if (info.isDirectory()) {
    const found = [];
    for (const entry of DIRECTORY_ENTRIES) {
      if (await stat(path.join(file, entry)).catch(() => null)) found.push(path.join(file, entry));
    }
    if (!found[0]) throw new UsageError(`--against ${target} has none of ${DIRECTORY_ENTRIES.join(", ")}`);
    file = found[0];
  }
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const list = module.workflows ?? module.ALL_WORKFLOWS ?? module.default;
  if (!Array.isArray(list) || list.some((w) => (w as { kind?: unknown })?.kind !== "workflow")) {
    throw new UsageError(
      `${file} must export \`workflows\` (or ALL_WORKFLOWS, or a default export): a list of defineWorkflow definitions`,
    );
  }
  return list as AnyWorkflow[];
}

export interface CompatFinding {
  executionId: string;
  orgId: string;
  workflow: string;
  version: number;
  status: string;
  outcome: DryReplayOutcome;
}

/** Dry-replays every unfinished execution against `workflows`; returns each one's outcome. */
export async function compatibilityReport(
  pool: Pool,
  workflows: readonly AnyWorkflow[],
  options: { timeoutMs?: number } = {},
): Promise<CompatFinding[]> {
  const registry = new WorkflowRegistry(workflows);
  const findings: CompatFinding[] = [];
  for await (const execution of inFlightExecutions(pool)) {
    findings.push({
      executionId: execution.id,
      orgId: execution.orgId,
      workflow: execution.workflow,
      version: execution.workflowVersion,
      status: execution.status,
      outcome: await dryReplay(execution, registry, options),
    });
  }
  return findings;
}

/** `tenor compat --against <module>`; exit 1 when any execution would break. */
export async function runCompatCommand(args: readonly string[], pool: Pool, io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { against: { type: "string" }, json: { type: "boolean" }, "timeout-ms": { type: "string" } },
    strict: true,
  });
  if (!values.against) throw new UsageError("--against <module or directory> is required");
  const timeoutMs = values["timeout-ms"] === undefined ? 5_000 : Number(values["timeout-ms"]);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new UsageError(
      `--timeout-ms must be a positive integer, got ${JSON.stringify(values["timeout-ms"])}`,
    );
  }
  const workflows = await loadWorkflowModule(values.against);
  const findings = await compatibilityReport(pool, workflows, { timeoutMs });
  const breaking = findings.filter((f) => isBreaking(f.outcome));
  if (values.json) {
    io.stdout(
      `${JSON.stringify({ checked: findings.length, breaking: breaking.length, findings: breaking }, null, 2)}\n`,
    );
  } else {
    io.stdout(
      renderTable(
        ["EXECUTION", "ORG", "WORKFLOW", "STATUS", "PROBLEM", "POSITION", "RECORDED", "NEW CALL"],
        breaking.map((f) => [
          f.executionId,
          f.orgId,
          `${f.workflow}@${f.version}`,
          f.status,
          ...describe(f.outcome),
        ]),
      ),
    );
    io.stdout(`${findings.length} unfinished executions replayed, ${breaking.length} would break\n`);
  }
  return breaking.length > 0 ? EXIT.FAILED : EXIT.OK;
}

function call(c: JournalCall): string {
  return `${c.kind} "${c.name}"${c.cause !== undefined ? ` after delivery ${c.cause}` : ""}`;
}

function describe(outcome: DryReplayOutcome): [string, unknown, unknown, unknown] {
  switch (outcome.kind) {
    case "non-determinism":
      return ["non-determinism", outcome.position, call(outcome.recorded), call(outcome.found)];
    case "version-missing":
      return [`version missing (build has ${outcome.registered.join(", ") || "none"})`, null, null, null];
    case "input-invalid":
      return [`input no longer decodes: ${outcome.message}`, null, null, null];
    case "throws":
      return [`throws ${outcome.code}: ${outcome.message}`, null, null, null];
    case "stalled":
      return [`stalled: ${outcome.message}`, null, null, null];
    case "compatible":
      return ["compatible", null, null, null];
  }
}

import { TenorError } from "../errors/tenor-error.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { type AnyWorkflow, declaredWorkflows, type WorkflowDefinition } from "./workflow.js";

/**
 * The workflows this process can start and advance, every deployed version of each. Starts use
 * the newest version; an execution always runs on the version it started with (docs/engine.md,
 * "Versions"). Built once, before any startup work.
 */
export class WorkflowRegistry {
  /** Name → version → definition. */
  private readonly byName = new Map<string, Map<number, WorkflowDefinition>>();

  constructor(workflows: readonly AnyWorkflow[]) {
    for (const workflow of workflows) {
      const versions = this.byName.get(workflow.name) ?? new Map<number, WorkflowDefinition>();
      if (versions.has(workflow.version)) {
        throw new TenorError(
          ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
          `workflow ${workflow.name} version ${workflow.version} is registered twice`,
          { details: { workflow: workflow.name, version: workflow.version } },
        );
      }
      versions.set(workflow.version, workflow as unknown as WorkflowDefinition);
      this.byName.set(workflow.name, versions);
    }
  }

  /** The newest registered version, or a refusal with WORKFLOW_UNKNOWN naming what is registered. */
  get(name: string): WorkflowDefinition {
    const versions = this.byName.get(name);
    if (versions) return versions.get(Math.max(...versions.keys())) as WorkflowDefinition;
    throw new TenorError(
      ENGINE_ERRORS.WORKFLOW_UNKNOWN,
      `workflow ${JSON.stringify(name)} is not registered; registered: ${this.names().join(", ") || "(none)"}`,
      { details: { workflow: name, registered: this.names() } },
    );
  }

  /** Exactly `version` of the workflow, or undefined when this process does not have it. */
  version(name: string, version: number): WorkflowDefinition | undefined {
    return this.byName.get(name)?.get(version);
  }

  /** The registered versions of a workflow, ascending (empty when unknown). */
  versions(name: string): number[] {
    return [...(this.byName.get(name)?.keys() ?? [])].sort((a, b) => a - b);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * A runner refuses to start when a workflow was declared in this process but not registered:
   * its executions (or a parent's child call) would wait forever. A missing name is reported by
   * name; a missing version of a registered name as `name@version`.
   */
  assertAllDeclaredRegistered(): void {
    const missing = declaredWorkflows()
      .filter((w) => !this.version(w.name, w.version))
      .map((w) => (this.has(w.name) ? `${w.name}@${w.version}` : w.name));
    if (missing.length === 0) return;
    throw new TenorError(
      ENGINE_ERRORS.WORKFLOW_NOT_REGISTERED,
      `workflows declared but not registered with this runner: ${missing.join(", ")}; add them to the registry`,
      { details: { missing } },
    );
  }
}

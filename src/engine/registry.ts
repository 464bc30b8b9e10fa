import { TenorError } from "../errors/tenor-error.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { type AnyWorkflow, declaredWorkflowNames, type WorkflowDefinition } from "./workflow.js";

/** The workflows this process can start and advance. Built once, before any startup work. */
export class WorkflowRegistry {
  private readonly byName = new Map<string, WorkflowDefinition>();

  constructor(workflows: readonly AnyWorkflow[]) {
    for (const workflow of workflows) {
      if (this.byName.has(workflow.name)) {
        throw new TenorError(
          ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
          `workflow ${workflow.name} is registered twice`,
          {
            details: { workflow: workflow.name },
          },
        );
      }
      this.byName.set(workflow.name, workflow as unknown as WorkflowDefinition);
    }
  }

  /** Returns the definition or refuses with WORKFLOW_UNKNOWN, naming what is registered. */
  get(name: string): WorkflowDefinition {
    const workflow = this.byName.get(name);
    if (workflow) return workflow;
    throw new TenorError(
      ENGINE_ERRORS.WORKFLOW_UNKNOWN,
      `workflow ${JSON.stringify(name)} is not registered; registered: ${[...this.byName.keys()].join(", ") || "(none)"}`,
      { details: { workflow: name, registered: [...this.byName.keys()] } },
    );
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * A runner refuses to start when a workflow was declared in this process but not registered:
   * its executions (or a parent's child call) would wait forever.
   */
  assertAllDeclaredRegistered(): void {
    const missing = declaredWorkflowNames().filter((name) => !this.byName.has(name));
    if (missing.length === 0) return;
    throw new TenorError(
      ENGINE_ERRORS.WORKFLOW_NOT_REGISTERED,
      `workflows declared but not registered with this runner: ${missing.join(", ")}; add them to the registry`,
      { details: { missing } },
    );
  }
}

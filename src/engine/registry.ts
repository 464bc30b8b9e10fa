import { DefinitionRegistry } from "./definitions.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { type AnyWorkflow, declaredWorkflows, type WorkflowDefinition } from "./workflow.js";

/**
 * The workflows this process can start and advance, every deployed version of each. Starts use
 * the newest version; an execution always runs on the version it started with (docs/engine.md,
 * "Versions"). Built once, before any startup work.
 */
export class WorkflowRegistry extends DefinitionRegistry<WorkflowDefinition> {
  constructor(workflows: readonly AnyWorkflow[]) {
    super(
      {
        noun: "workflow",
        plural: "workflows",
        codes: {
          duplicate: ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
          unknown: ENGINE_ERRORS.WORKFLOW_UNKNOWN,
          notRegistered: ENGINE_ERRORS.WORKFLOW_NOT_REGISTERED,
        },
      },
      declaredWorkflows,
      workflows as readonly WorkflowDefinition[],
    );
  }
}

import type { z } from "zod";
import { TenorError } from "../errors/tenor-error.js";
import type { WorkflowContext } from "./context.js";
import { DEFINITION_NAME_PATTERN, DeclaredDefinitions } from "./definitions.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import type { AnyServiceKey } from "./services.js";

/** What `defineWorkflow` takes (README, "Writing a workflow"). */
export interface WorkflowSpec<I, O, IEnc = unknown, OEnc = unknown> {
  /** Stable name: the API route segment and the BullMQ job name. Lowercase, dot-separated. */
  name: string;
  /** Bumped when the body changes in a way the journal of running executions could not replay. */
  version: number;
  /** Decodes the API/journal encoding into typed values (and encodes them back for storage). */
  input: z.ZodType<I, IEnc>;
  output: z.ZodType<O, OEnc>;
  /** Optional keyed serialization: executions with one key run one at a time (docs/keyed.md). */
  key?: (input: I) => string;
  /** With `key`: most executions of one key running at once (default 1); the rest wait in arrival order. */
  keyLimit?: number;
  /**
   * Schemas of the signals the workflow waits for, by name. Optional: when a signal is declared
   * here, the API validates its payload before storing it (a wrong payload is refused with 422
   * instead of failing the run at its wait).
   */
  signals?: Readonly<Record<string, z.ZodType>>;
  /**
   * The services the body uses (`ctx.service(key)`): a runner that does not provide one of them
   * refuses to start (src/engine/services.ts).
   */
  services?: readonly AnyServiceKey[];
  /**
   * The one API path that starts it, with its own role and checks (for example
   * `/v1/assets/{id}/mints`). The generic start route refuses such a workflow (403, naming this
   * path) and the API document lists no generic start path for it. Default: started there.
   */
  startedThrough?: string;
  run(ctx: WorkflowContext, input: I): Promise<O>;
}

export interface WorkflowDefinition<I = unknown, O = unknown> extends Readonly<WorkflowSpec<I, O>> {
  readonly kind: "workflow";
}

/** Every workflow version defined in this process (see DeclaredDefinitions). */
export const declaredWorkflows = new DeclaredDefinitions<WorkflowDefinition>();

/** Defines a workflow. Validates the name and version at once; the result is frozen. */
export function defineWorkflow<I, O, IEnc = unknown, OEnc = unknown>(
  spec: WorkflowSpec<I, O, IEnc, OEnc>,
): WorkflowDefinition<I, O> {
  if (!DEFINITION_NAME_PATTERN.test(spec.name)) {
    throw new TenorError(
      ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
      `workflow name ${JSON.stringify(spec.name)} must match ${DEFINITION_NAME_PATTERN} (for example "asset.create")`,
      { details: { field: "name", value: spec.name } },
    );
  }
  if (!Number.isInteger(spec.version) || spec.version < 1) {
    throw new TenorError(
      ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
      `workflow ${spec.name}: version ${String(spec.version)} must be an integer ≥ 1`,
      { details: { field: "version", value: spec.version } },
    );
  }
  const definition = Object.freeze({ ...spec, kind: "workflow" as const }) as unknown as WorkflowDefinition<
    I,
    O
  >;
  declaredWorkflows.add(definition as WorkflowDefinition);
  return definition;
}

/** Any workflow, for registries and lists; the body's input type is erased there on purpose. */
// biome-ignore lint/suspicious/noExplicitAny: input and output are invariant; a list of workflows must erase them.
export type AnyWorkflow = WorkflowDefinition<any, any>;

/**
 * Keyed serialization (docs/keyed.md): the public entry point. Define entities with
 * `defineEntity`, send them commands with `EntityClient`, run them on a runner with
 * `startKeyedWorkers` (the runner engine does this for its registered entities).
 */
export {
  type CommandInput,
  type CommandOutput,
  defineEntity,
  type EntityContext,
  type EntityDefinition,
} from "./entity.js";
export { EntityClient, type EntityClientOptions, type SendOptions } from "./entity-client.js";
export { EntityRegistry } from "./entity-registry.js";
export { KEYED_ERRORS } from "./error-codes.js";
export { KeyedLanes } from "./keyed-lanes.js";
export {
  type KeyedSettings,
  type KeyedWorkers,
  type KeyedWorkersOptions,
  startKeyedWorkers,
} from "./keyed-workers.js";
export { KeyedWorkflowGate } from "./keyed-workflow-gate.js";

/**
 * Stable error codes of the engine. Business outcomes and infrastructure failures are
 * distinct codes (docs/engine.md, "Statuses"); none is ever reworded once shipped.
 */
export const ENGINE_ERRORS = {
  /** The workflow name is not registered in this process. */
  WORKFLOW_UNKNOWN: "WORKFLOW_UNKNOWN",
  /**
   * The execution started on a workflow version this runner does not have: it is held until a
   * runner with that version takes it (an execution never runs on other code than it started on).
   */
  WORKFLOW_VERSION_UNAVAILABLE: "WORKFLOW_VERSION_UNAVAILABLE",
  /** A workflow or activity was declared (imported) but not given to the registry. */
  WORKFLOW_NOT_REGISTERED: "WORKFLOW_NOT_REGISTERED",
  WORKFLOW_DEFINITION_INVALID: "WORKFLOW_DEFINITION_INVALID",
  /** An activity job names an activity this runner does not register. */
  ACTIVITY_UNKNOWN: "ACTIVITY_UNKNOWN",
  /** The start input failed the workflow's input schema. */
  INPUT_INVALID: "INPUT_INVALID",
  /** A step or workflow result failed its schema. */
  OUTPUT_INVALID: "OUTPUT_INVALID",
  /** Replay met a journal position whose recorded name or kind differs from the code. */
  NON_DETERMINISM: "NON_DETERMINISM",
  /** Suspension recovery ran out of attempts or time. */
  RECOVERY_EXHAUSTED: "RECOVERY_EXHAUSTED",
  /** Workflow code threw something that is not a business error, outside any step. */
  WORKFLOW_CODE_ERROR: "WORKFLOW_CODE_ERROR",
  /**
   * PostgreSQL refused to store a journal row for a reason in the data itself (SQLSTATE classes
   * 22, 23, 54: e.g. `\u0000` in text, a value too large): the position fails once, never retried.
   */
  RESULT_NOT_STORABLE: "RESULT_NOT_STORABLE",
  /**
   * The workflow's output cannot be stored (U+0000, a lone surrogate, past the size limit): the
   * execution ends `failed` with the path of the value, once (docs/engine.md, "What PostgreSQL can store").
   */
  OUTPUT_NOT_STORABLE: "OUTPUT_NOT_STORABLE",
  /**
   * A value the body handed to the engine cannot be stored: a step or wait name, a child's or an
   * activity's input, approval parameters, a progress snapshot, or a row the store refused at
   * the end of a turn. Refused before it takes a position; names the path of the value.
   */
  VALUE_NOT_STORABLE: "VALUE_NOT_STORABLE",
  /** A child workflow failed; details carry the child's failure. */
  CHILD_FAILED: "CHILD_FAILED",
  /** This turn's fencing token is stale: another runner advanced the execution. */
  TURN_FENCED: "TURN_FENCED",
  /** An idempotency key was reused with a different request. */
  IDEMPOTENCY_KEY_REUSED: "IDEMPOTENCY_KEY_REUSED",
  EXECUTION_NOT_FOUND: "EXECUTION_NOT_FOUND",
  /** A signal was sent to an execution that already completed or failed. */
  EXECUTION_TERMINAL: "EXECUTION_TERMINAL",
  /** Resume asked of an execution that is not suspended or held (a bulk operation's item). */
  EXECUTION_NOT_SUSPENDED: "EXECUTION_NOT_SUSPENDED",
  /**
   * Reset asked of a run that is running, waiting or completed, or of a failed run that was
   * cancelled, is a child or held a key (`details.status`, `details.rule`; docs/engine.md, "Reset").
   */
  EXECUTION_NOT_RESETTABLE: "EXECUTION_NOT_RESETTABLE",
  /** Reset to a position outside 0..journal length (`details.min`, `details.max`). */
  RESET_POSITION_OUT_OF_RANGE: "RESET_POSITION_OUT_OF_RANGE",
  /**
   * Reset that would set aside a child workflow or an activity still in flight (`details.position`):
   * their ids derive from the position, so the new code would meet them again.
   */
  RESET_SETS_ASIDE_DISPATCHED: "RESET_SETS_ASIDE_DISPATCHED",
  /**
   * The newest version cannot replay the positions a reset keeps (`details.position`: the first
   * that differs; `recorded`, `found`), checked by the dry replay `tenor compat` uses.
   */
  RESET_PREFIX_NOT_REPLAYABLE: "RESET_PREFIX_NOT_REPLAYABLE",
  /** Unpause asked of a run that is not paused (a bulk operation's item). */
  EXECUTION_NOT_PAUSED: "EXECUTION_NOT_PAUSED",
  /** A signal's payload failed the schema its workflow declares (a bulk operation's item). */
  SIGNAL_INVALID: "SIGNAL_INVALID",
  /** A step result that is not JSON-safe and has no schema to encode it. */
  STEP_RESULT_NOT_SERIALIZABLE: "STEP_RESULT_NOT_SERIALIZABLE",
  DURATION_INVALID: "DURATION_INVALID",
  /** Cooperative cancellation requested through the API. */
  CANCELLED: "CANCELLED",
  /** A recorded approval decision names other parameters than the workflow now asks approval for. */
  APPROVAL_PARAMS_CHANGED: "APPROVAL_PARAMS_CHANGED",
  /** A workflow that declares `key` was started by a client without keyed admission (src/keyed). */
  KEYED_ADMISSION_MISSING: "KEYED_ADMISSION_MISSING",
  /** A refusal recorded from a thrown value with neither a code nor a name. */
  REFUSED: "REFUSED",
  /** A registered workflow or activity declares a service the runner does not provide: it refuses to start. */
  SERVICE_MISSING: "SERVICE_MISSING",
  /** Two providers gave the same service name to one runner. */
  SERVICE_PROVIDED_TWICE: "SERVICE_PROVIDED_TWICE",
  /** Code asked its context for a service its definition did not declare (a programming error). */
  SERVICE_NOT_DECLARED: "SERVICE_NOT_DECLARED",
  /** A declared service is not provided in this process (not a runner): retryable. */
  SERVICE_UNAVAILABLE: "SERVICE_UNAVAILABLE",
} as const;

export type EngineErrorCode = (typeof ENGINE_ERRORS)[keyof typeof ENGINE_ERRORS];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    engine: EngineErrorCode;
  }
}

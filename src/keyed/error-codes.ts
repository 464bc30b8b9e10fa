/** Stable error codes of keyed serialization (docs/keyed.md); never reworded once shipped. */
export const KEYED_ERRORS = {
  /** `defineEntity` got an invalid name, limit or handler. */
  ENTITY_DEFINITION_INVALID: "ENTITY_DEFINITION_INVALID",
  /** The entity or command is not registered in this process. */
  ENTITY_UNKNOWN: "ENTITY_UNKNOWN",
  /** An entity was declared (imported) but not given to the runner's registry. */
  ENTITY_NOT_REGISTERED: "ENTITY_NOT_REGISTERED",
  /** The command input failed its schema. */
  COMMAND_INPUT_INVALID: "COMMAND_INPUT_INVALID",
  /** A handler's result failed the command's output schema. */
  COMMAND_OUTPUT_INVALID: "COMMAND_OUTPUT_INVALID",
  /** A command id was reused for another command or input. */
  COMMAND_ID_REUSED: "COMMAND_ID_REUSED",
  /** No reply within the caller's timeout; the command stays queued and a resend with its id waits again. */
  COMMAND_REPLY_TIMEOUT: "COMMAND_REPLY_TIMEOUT",
  /** A handler kept failing on transient errors past the entity's attempt bound. */
  COMMAND_ATTEMPTS_EXHAUSTED: "COMMAND_ATTEMPTS_EXHAUSTED",
  /** A handler failed on something that is not a TenorError: recorded for the retry, not final. */
  COMMAND_TRANSIENT: "COMMAND_TRANSIENT",
} as const;

export type KeyedErrorCode = (typeof KEYED_ERRORS)[keyof typeof KEYED_ERRORS];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    keyed: KeyedErrorCode;
  }
}

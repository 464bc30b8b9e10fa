/** Stable error codes of the `tenor` CLI's own failures; never reworded once shipped. */
export const CLI_ERRORS = {
  /** The Platform API at TENOR_API_URL could not be reached. */
  API_UNREACHABLE: "API_UNREACHABLE",
} as const;

export type CliErrorCode = (typeof CLI_ERRORS)[keyof typeof CLI_ERRORS];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    cli: CliErrorCode;
  }
}

/** Stable error codes of configuration loading; never reworded once shipped. */
export const CONFIG_ERRORS = {
  /** One or more configuration keys break their rule; `details.issues` lists each. */
  CONFIG_INVALID: "CONFIG_INVALID",
  /** DAPI_ROLE names no role. */
  ROLE_INVALID: "ROLE_INVALID",
} as const;

export type ConfigErrorCode = (typeof CONFIG_ERRORS)[keyof typeof CONFIG_ERRORS];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    config: ConfigErrorCode;
  }
}

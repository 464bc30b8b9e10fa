/** Stable error codes of the helpers every flow shares; never reworded once shipped. */
export const FLOW_SUPPORT_ERRORS = {
  /** A deployment was mined but left no code at its address (a business failure). */
  CONTRACT_NOT_DEPLOYED: "CONTRACT_NOT_DEPLOYED",
  /** A write was mined but reverted (a business failure). */
  WRITE_REVERTED: "CHAIN_WRITE_REVERTED",
} as const;

export type FlowSupportErrorCode = (typeof FLOW_SUPPORT_ERRORS)[keyof typeof FLOW_SUPPORT_ERRORS];

declare module "../../src/errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    flowSupport: FlowSupportErrorCode;
  }
}

/** Stable codes of the chain boundary's errors (docs/chains.md). Never reworded once shipped. */
export const CHAIN_ERRORS = Object.freeze({
  /** No chain with this id is configured. */
  CHAIN_UNKNOWN: "CHAIN_UNKNOWN",
  /** No signer with this id is configured, or the organisation may not use it. */
  SIGNER_UNKNOWN: "SIGNER_UNKNOWN",
  /** The node could not be reached or answered with a transport error: retryable. */
  RPC_UNAVAILABLE: "RPC_UNAVAILABLE",
  /** The paying wallet (or paymaster deposit) cannot cover the operation; names the shortfall. */
  GAS_REQUIRED: "GAS_REQUIRED",
  /** The EntryPoint could not be resolved (network failure): retryable, never a pass-through. */
  ENTRYPOINT_UNRESOLVED: "ENTRYPOINT_UNRESOLVED",
  /** A submission named the configured (reference) EntryPoint instead of the resolved one. */
  ENTRYPOINT_NOT_RESOLVED_ADDRESS: "ENTRYPOINT_NOT_RESOLVED_ADDRESS",
  /** ERC-8021 attribution codes that cannot be encoded (empty, comma, non-ASCII, too long). */
  ATTRIBUTION_INVALID: "ATTRIBUTION_INVALID",
  /** The custody provider answered 5xx, timed out or was unreachable: retryable. */
  CUSTODY_UNAVAILABLE: "CUSTODY_UNAVAILABLE",
  /** The custody provider refused the request itself (4xx): not retryable. */
  CUSTODY_REFUSED: "CUSTODY_REFUSED",
  /** A custody intent was rejected by the provider's approvers: terminal, with their reason. */
  CUSTODY_REJECTED: "CUSTODY_REJECTED",
  /** A platform-scoped custody intent did not settle within its poll budget. */
  CUSTODY_POLL_BUDGET_EXHAUSTED: "CUSTODY_POLL_BUDGET_EXHAUSTED",
  /** A stuck transaction was replaced as often as allowed (or hit the fee cap): an operator decides. */
  TX_STUCK: "TX_STUCK",
  /** The node refused the transaction for a reason no retry fixes (e.g. intrinsic gas too low). */
  TX_REFUSED: "TX_REFUSED",
  /**
   * A UserOperation that cannot be executed: the EntryPoint's validation refused it (its AAnn
   * reason), its bundle reverted, or the request cannot be one (custody signer, paymaster without
   * an account). Terminal; nothing ran on chain.
   */
  USER_OPERATION_REFUSED: "USER_OPERATION_REFUSED",
  /**
   * A deployment (no `to`) that cannot be sent: no creation bytecode, init code over EIP-3860's
   * limit, a UserOperation, or a custody signer. Terminal; nothing was signed.
   */
  DEPLOYMENT_REFUSED: "DEPLOYMENT_REFUSED",
  /** The UserOperation ran and its call failed (`UserOperationEvent.success = false`): terminal, never re-sent. */
  USER_OPERATION_REVERTED: "USER_OPERATION_REVERTED",
});

export type ChainErrorCode = (typeof CHAIN_ERRORS)[keyof typeof CHAIN_ERRORS];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    chain: ChainErrorCode;
  }
}

/**
 * Stable error codes of corporate actions (docs/corporate-actions.md, "Errors"). Each is a business
 * outcome (BusinessError, not retryable) unless said otherwise.
 */
export const CORPORATE_ACTION_ERRORS = {
  /** An input that only the chain can check: an amount finer than the payment token's decimals. */
  INVALID: "CORPORATE_ACTION_INVALID",
  /** The organisation does not track the asset in the Ledger Index at the record height. */
  TOKEN_NOT_TRACKED: "CORPORATE_ACTION_TOKEN_NOT_TRACKED",
  /** The Ledger Index did not reach the record height within the wait. */
  NOT_INDEXED: "CORPORATE_ACTION_NOT_INDEXED",
  /** No settled block after the record date appeared within the wait. */
  RECORD_DATE_UNSETTLED: "CORPORATE_ACTION_RECORD_DATE_UNSETTLED",
  /** Nobody but excluded wallets held the asset at the record height. */
  NO_HOLDERS: "CORPORATE_ACTION_NO_HOLDERS",
  /** The payout was rejected by an approver, or not approved in time. */
  APPROVAL_REJECTED: "CORPORATE_ACTION_APPROVAL_REJECTED",
  APPROVAL_EXPIRED: "CORPORATE_ACTION_APPROVAL_EXPIRED",
  /** The paying wallet holds less of the payment token than the next batch pays. */
  PAYER_SHORT: "CORPORATE_ACTION_PAYER_SHORT",
} as const;

export type CorporateActionErrorCode = (typeof CORPORATE_ACTION_ERRORS)[keyof typeof CORPORATE_ACTION_ERRORS];

declare module "../../src/errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    corporateActions: CorporateActionErrorCode;
  }
}

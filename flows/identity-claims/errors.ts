/**
 * Stable codes of the identity-claim batch's business outcomes (docs/identity-claims.md). Input
 * errors are the engine's INPUT_INVALID, with one issue per field naming index, value and rule.
 */
export const IDENTITY_CLAIM_ERRORS = {
  /** No contract code at the registry address on that chain. */
  CLAIM_REGISTRY_NOT_FOUND: "CLAIM_REGISTRY_NOT_FOUND",
  /** Code at the address, but it does not answer as a ClaimRegistry. */
  CLAIM_REGISTRY_INVALID: "CLAIM_REGISTRY_INVALID",
  /** The registry does not let the organisation's signer add claims (neither owner nor issuer). */
  CLAIM_REGISTRY_NOT_WRITABLE: "CLAIM_REGISTRY_NOT_WRITABLE",
  /** The signer is a platform signer: claims are issued only under an organisation's own key. */
  CLAIM_SIGNER_NOT_ORGANISATION: "CLAIM_SIGNER_NOT_ORGANISATION",
  /** The approval's deadline passed without a decision; nothing was written. */
  APPROVAL_EXPIRED: "APPROVAL_EXPIRED",
  /** An approver rejected the batch; nothing was written. */
  APPROVAL_REJECTED: "APPROVAL_REJECTED",
} as const;

export type IdentityClaimErrorCode = (typeof IDENTITY_CLAIM_ERRORS)[keyof typeof IDENTITY_CLAIM_ERRORS];

declare module "../../src/errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    identityClaims: IdentityClaimErrorCode;
  }
}

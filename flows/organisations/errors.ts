/** Stable codes of the organisation deployment's errors (docs/organisations.md). Never reworded once shipped. */
export const ORGANISATION_ERRORS = Object.freeze({
  /** Another deployment of the organisation's system on that chain is still running. */
  ORGANISATION_DEPLOYMENT_IN_PROGRESS: "ORGANISATION_DEPLOYMENT_IN_PROGRESS",
  /** The deployment was declared failed (its execution had failed or was gone): start a new one. */
  ORGANISATION_DEPLOYMENT_ABANDONED: "ORGANISATION_DEPLOYMENT_ABANDONED",
  /** A system record names a malformed address, chain or height. */
  ORGANISATION_SYSTEM_INVALID: "ORGANISATION_SYSTEM_INVALID",
  /** No deployment is registered for the execution. */
  ORGANISATION_SYSTEM_NOT_FOUND: "ORGANISATION_SYSTEM_NOT_FOUND",
});

export type OrganisationErrorCode = (typeof ORGANISATION_ERRORS)[keyof typeof ORGANISATION_ERRORS];

declare module "../../src/errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    organisations: OrganisationErrorCode;
  }
}

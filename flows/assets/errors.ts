/** The stable codes asset creation and minting fail with (docs/assets.md); never reworded once shipped. */
export const ASSET_ERRORS = {
  /** `templateId` names no template of the caller's organisation. */
  TEMPLATE_UNKNOWN: "ASSET_TEMPLATE_UNKNOWN",
  /** `initialPrice` has more decimals than the template's feed. */
  PRICE_INVALID: "ASSET_PRICE_INVALID",
  /** The template's resolver has no code or another owner than the template's signer. */
  RESOLVER_UNUSABLE: "ASSET_RESOLVER_UNUSABLE",
  /** Another creation of the same asset owns it and has not failed: resume that one. */
  ALREADY_CREATING: "ASSET_ALREADY_CREATING",
  /** The resolver already prices this token with a different feed. */
  FEED_CONFLICT: "ASSET_FEED_CONFLICT",
  /** A mint's amount has more decimals than the token, or the amounts overflow its supply. */
  MINT_INVALID: "ASSET_MINT_INVALID",
  /** A mint of an asset that cannot mint: not the organisation's, still paused, or its template is gone. */
  NOT_MINTABLE: "ASSET_NOT_MINTABLE",
} as const;

export type AssetErrorCode = (typeof ASSET_ERRORS)[keyof typeof ASSET_ERRORS];

declare module "../../src/errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    assets: AssetErrorCode;
  }
}

import { TenorError } from "../../src/errors/tenor-error.js";
import { ASSET_ERRORS } from "./asset-errors.js";
import type { AssetRecord, NewAsset } from "./asset-record.js";

/**
 * What asset creation needs from outside the workflow (docs/assets.md): the platform's asset
 * templates (from configuration) and the assets read model (a table). Bound by the runner's
 * composition root (workers/application.ts) before it takes work; tests bind their own.
 */

/** An asset template as configured (`assetTemplates`): facts a caller never supplies. */
export interface AssetTemplate {
  id: string;
  kind: "bond" | "fund";
  orgId: string;
  chainId: number;
  signerId: string;
  resolver: string;
  stalenessSeconds: number;
  tokenDecimals: number;
  priceDecimals: number;
}

export interface AssetTemplates {
  /** The template with this id, or undefined. */
  get(id: string): AssetTemplate | undefined;
}

/**
 * What a claim found: `claimed` (this execution owns the row, new or already), `taken-over` (its
 * previous creation had failed; this execution continues the same asset), or `held` (another
 * creation owns it and has not failed: `ownerStatus` says what it is doing).
 */
export type AssetClaim =
  | { outcome: "claimed" | "taken-over"; asset: AssetRecord }
  | { outcome: "held"; asset: AssetRecord; ownerStatus: string };

export interface AssetProgress {
  token?: string;
  feed?: string;
  /** Appended once per step name: a re-run of the step adds nothing. */
  hash?: { step: string; hash: string };
}

export interface AssetRegistry {
  /** Inserts the asset row for (org, template, symbol) unless it exists, and says who owns it. */
  claim(asset: NewAsset): Promise<AssetClaim>;
  /**
   * Records progress, only while `executionId` owns the row.
   * @throws TenorError ASSET_NOT_OWNED when another execution owns it now.
   */
  record(orgId: string, id: string, executionId: string, progress: AssetProgress): Promise<AssetRecord>;
  /**
   * Marks the asset active (paused → active happens once: `activated` is false when it already was).
   * @throws TenorError ASSET_NOT_OWNED when another execution owns it now.
   */
  activate(
    orgId: string,
    id: string,
    executionId: string,
  ): Promise<{ activated: boolean; asset: AssetRecord }>;
}

let templates: AssetTemplates | undefined;
let registry: AssetRegistry | undefined;

/** Binds the templates and the registry; returns the unbinding. */
export function bindAssetPorts(ports: { templates: AssetTemplates; registry: AssetRegistry }): () => void {
  templates = ports.templates;
  registry = ports.registry;
  return () => {
    if (templates === ports.templates) templates = undefined;
    if (registry === ports.registry) registry = undefined;
  };
}

export function assetTemplates(): AssetTemplates {
  return templates ?? unbound();
}

export function assetRegistry(): AssetRegistry {
  return registry ?? unbound();
}

function unbound(): never {
  // Retryable: the execution suspends and resumes on a runner that has the ports bound.
  throw new TenorError(
    ASSET_ERRORS.PORTS_MISSING,
    "this process has no asset ports bound (runner role only)",
    {
      retryable: true,
    },
  );
}

import { defineService } from "../../src/engine/services.js";
import type { AssetRecord, NewAsset } from "./asset-record.js";

/**
 * What asset creation needs from outside the workflow (docs/assets.md): the platform's asset
 * templates (from configuration) and the assets read model (a table). A service
 * (src/engine/services.ts) the runner's composition root (workers/application.ts) provides; tests
 * provide their own.
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
  /** The organisation's asset with this id, or undefined (another organisation's too). */
  get(orgId: string, id: string): Promise<AssetRecord | undefined>;
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

/** The templates and the registry together: the service asset creation declares. */
export interface AssetPorts {
  templates: AssetTemplates;
  registry: AssetRegistry;
}

export const assetPortsService = defineService<AssetPorts>("assets.ports");

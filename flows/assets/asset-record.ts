/**
 * One asset's row in the assets read model, as its creation writes it (docs/assets.md): the shape
 * the asset workflow, the store and the API share.
 */
export interface AssetRecord {
  id: string;
  orgId: string;
  templateId: string;
  symbol: string;
  name: string;
  kind: "bond" | "fund";
  chainId: number;
  executionId: string;
  status: "paused" | "active";
  token: string | null;
  feed: string | null;
  resolver: string;
  hashes: { step: string; hash: string }[];
  createdAt: string;
  activatedAt: string | null;
}

/** What a creation's claim writes; the rest is set as the creation goes on. */
export type NewAsset = Omit<
  AssetRecord,
  "status" | "token" | "feed" | "hashes" | "createdAt" | "activatedAt"
>;

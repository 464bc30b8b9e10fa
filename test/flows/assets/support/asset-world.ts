import { type Address, parseAbiItem } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type AssetTemplate, assetPortsService } from "../../../../flows/assets/ports.js";
import { PgAssets } from "../../../../flows/assets/store/pg-assets.js";
import { type IndexingScope, indexingScopeService } from "../../../../flows/support/indexing-scope.js";
import { deployPriceResolver } from "../../../../scripts/dev-chain/price-resolver.js";
import { provide, type ServiceProvision } from "../../../../src/engine/services.js";
import { pgIndexingScope } from "../../../../workers/indexing-scope.js";
import type { Anvil } from "../../../support/anvil.js";
import { ANVIL_KEYS } from "../../../support/anvil.js";
import type { HarnessConnections } from "../../../support/engine-harness.js";

/** What the asset tests share: a resolver owned by signer `hot` (anvil key 1), its template, event counts. */

export const HOT = privateKeyToAccount(ANVIL_KEYS[1]).address;

/** Deploys a resolver owned by `hot` (sent from anvil key 0, whose nonces Tenor never reserves). */
export async function resolverForHot(anvil: Anvil): Promise<Address> {
  return deployPriceResolver({ url: anvil.url, deployerKey: ANVIL_KEYS[0], owner: HOT });
}

export function bondTemplate(
  anvil: Anvil,
  resolver: Address,
  overrides: Partial<AssetTemplate> = {},
): AssetTemplate {
  return {
    id: "acme-bond",
    kind: "bond",
    orgId: "acme",
    chainId: anvil.chainId,
    signerId: "hot",
    resolver,
    stalenessSeconds: 3600,
    tokenDecimals: 18,
    priceDecimals: 8,
    ...overrides,
  };
}

/**
 * The services asset creation declares, over the world's pool: the assets table, the indexing
 * scope (`scope` over the table, default the table itself), and `templates`, which the test fills
 * in once it deployed their resolver.
 */
export function assetServices(
  templates: readonly AssetTemplate[],
  scope: (table: IndexingScope) => IndexingScope = (table) => table,
): (connections: HarnessConnections) => ServiceProvision[] {
  return ({ pool }) => [
    provide(assetPortsService, {
      templates: { get: (id) => templates.find((t) => t.id === id) },
      registry: new PgAssets(pool),
    }),
    provide(indexingScopeService, scope(pgIndexingScope(pool))),
  ];
}

export const assetsOf = (pool: import("pg").Pool) => new PgAssets(pool);

const EVENTS = {
  FeedCreated: parseAbiItem(
    "event FeedCreated(address indexed asset, address indexed owner, uint8 decimals)",
  ),
  ObservationSubmitted: parseAbiItem(
    "event ObservationSubmitted(uint80 indexed roundId, int256 answer, uint256 updatedAt)",
  ),
  StalenessBoundSet: parseAbiItem(
    "event StalenessBoundSet(address indexed asset, address indexed feed, uint256 maxAgeSeconds)",
  ),
};

/** How many of each asset event the chain holds (every contract, from genesis). */
export async function eventCounts(anvil: Anvil): Promise<Record<keyof typeof EVENTS, number>> {
  const count = async (event: (typeof EVENTS)[keyof typeof EVENTS]) =>
    (await anvil.public.getLogs({ event, fromBlock: 0n, toBlock: "latest" })).length;
  return {
    FeedCreated: await count(EVENTS.FeedCreated),
    ObservationSubmitted: await count(EVENTS.ObservationSubmitted),
    StalenessBoundSet: await count(EVENTS.StalenessBoundSet),
  };
}

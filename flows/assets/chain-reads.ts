import type { Address } from "viem";
import { AssetToken, PriceFeed, PriceResolver } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { ServiceLookup } from "../../src/engine/services.js";
import { addressText } from "../../src/values/index.js";

/**
 * The reads asset creation journals before each feed write, so a re-run (a takeover of a failed
 * creation, or a write that landed before its result was recorded) confirms instead of writing
 * again. Each returns what it saw; the workflow decides.
 */

const client = (services: ServiceLookup, chainId: number) =>
  services.service(chainAccessService).chains.get(chainId).public;

/** The feed's latest round (0: no observation yet). */
export async function latestRound(services: ServiceLookup, chainId: number, feed: Address): Promise<number> {
  const round = await client(services, chainId).readContract({
    address: feed,
    abi: PriceFeed.abi,
    functionName: "latestRound",
  });
  return Number(round);
}

/** The resolver's feed and staleness bound for `asset` (zero address and 0 when it has none). */
export async function resolverEntry(
  services: ServiceLookup,
  chainId: number,
  resolver: Address,
  asset: Address,
): Promise<{ feed: string; maxAgeSeconds: string }> {
  const [feed, maxAge] = await Promise.all([
    client(services, chainId).readContract({
      address: resolver,
      abi: PriceResolver.abi,
      functionName: "feedOf",
      args: [asset],
    }),
    client(services, chainId).readContract({
      address: resolver,
      abi: PriceResolver.abi,
      functionName: "maxAgeOf",
      args: [asset],
    }),
  ]);
  return { feed: addressText(feed), maxAgeSeconds: maxAge.toString() };
}

/** The token's own answer to `paused()`. */
export async function tokenPaused(
  services: ServiceLookup,
  chainId: number,
  token: Address,
): Promise<boolean> {
  return client(services, chainId).readContract({
    address: token,
    abi: AssetToken.abi,
    functionName: "paused",
  });
}

/** The resolver's owner, lower-case. */
export async function resolverOwner(
  services: ServiceLookup,
  chainId: number,
  resolver: Address,
): Promise<string> {
  const owner = await client(services, chainId).readContract({
    address: resolver,
    abi: PriceResolver.abi,
    functionName: "owner",
  });
  return addressText(owner);
}

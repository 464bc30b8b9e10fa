import type { Address } from "viem";
import { AssetToken, PriceFeed, PriceResolver } from "../../src/chain/contracts/artifacts.js";
import { chainRuntime } from "../../src/chain/lifecycle/chain-runtime.js";
import { addressText } from "../../src/values/index.js";

/**
 * The reads asset creation journals before each feed write, so a re-run (a takeover of a failed
 * creation, or a write that landed before its result was recorded) confirms instead of writing
 * again. Each returns what it saw; the workflow decides.
 */

const client = (chainId: number) => chainRuntime().chains.get(chainId).public;

/** The feed's latest round (0: no observation yet). */
export async function latestRound(chainId: number, feed: Address): Promise<number> {
  const round = await client(chainId).readContract({
    address: feed,
    abi: PriceFeed.abi,
    functionName: "latestRound",
  });
  return Number(round);
}

/** The resolver's feed and staleness bound for `asset` (zero address and 0 when it has none). */
export async function resolverEntry(
  chainId: number,
  resolver: Address,
  asset: Address,
): Promise<{ feed: string; maxAgeSeconds: string }> {
  const [feed, maxAge] = await Promise.all([
    client(chainId).readContract({
      address: resolver,
      abi: PriceResolver.abi,
      functionName: "feedOf",
      args: [asset],
    }),
    client(chainId).readContract({
      address: resolver,
      abi: PriceResolver.abi,
      functionName: "maxAgeOf",
      args: [asset],
    }),
  ]);
  return { feed: addressText(feed), maxAgeSeconds: maxAge.toString() };
}

/** The token's own answer to `paused()`. */
export async function tokenPaused(chainId: number, token: Address): Promise<boolean> {
  return client(chainId).readContract({ address: token, abi: AssetToken.abi, functionName: "paused" });
}

/** The resolver's owner, lower-case. */
export async function resolverOwner(chainId: number, resolver: Address): Promise<string> {
  const owner = await client(chainId).readContract({
    address: resolver,
    abi: PriceResolver.abi,
    functionName: "owner",
  });
  return addressText(owner);
}

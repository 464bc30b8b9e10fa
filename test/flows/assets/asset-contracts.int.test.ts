import { type Address, createWalletClient, getAddress, type Hex, http, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssetToken, PriceFeed, PriceResolver } from "../../../src/chain/contracts/artifacts.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../support/anvil.js";

/**
 * The asset contracts on anvil, without the engine: the token cannot mint until the resolver holds
 * a staleness bound for it, and the resolver never swaps an asset's feed.
 */

let anvil: Anvil;
const owner = privateKeyToAccount(ANVIL_KEYS[2]);
const stranger = privateKeyToAccount(ANVIL_KEYS[3]);
const holders = [privateKeyToAccount(ANVIL_KEYS[4]).address, privateKeyToAccount(ANVIL_KEYS[5]).address];

beforeAll(async () => {
  anvil = await startAnvil();
});
afterAll(async () => {
  await anvil?.stop();
});

const chain = () => ({
  id: anvil.chainId,
  name: "anvil",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [anvil.url] } },
});
const walletOf = (account: typeof owner) =>
  createWalletClient({ account, chain: chain(), transport: http(anvil.url) });

async function deploy(abi: readonly unknown[], bytecode: Hex, args: readonly unknown[]): Promise<Address> {
  // biome-ignore lint/suspicious/noExplicitAny: one helper for three artifacts.
  const hash = await walletOf(owner).deployContract({ abi: abi as any, bytecode, args: args as any });
  const receipt = await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return getAddress(receipt.contractAddress as Address);
}

async function reverts(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    return String((error as { shortMessage?: string }).shortMessage ?? error) + String(error);
  }
  throw new Error("expected a revert");
}

describe("asset contracts", () => {
  it("a token stays paused and cannot mint until its feed's staleness bound is set", async () => {
    const resolver = await deploy(PriceResolver.abi, PriceResolver.bytecode, [owner.address]);
    const token = await deploy(AssetToken.abi, AssetToken.bytecode, [
      "Bond",
      "BND",
      18,
      owner.address,
      resolver,
    ]);
    const feed = await deploy(PriceFeed.abi, PriceFeed.bytecode, [token, owner.address, 8]);
    const read = anvil.public;
    expect(await read.readContract({ address: token, abi: AssetToken.abi, functionName: "paused" })).toBe(
      true,
    );
    const wallet = walletOf(owner);
    const mint = () =>
      read.simulateContract({
        account: owner,
        address: token,
        abi: AssetToken.abi,
        functionName: "mintBatch",
        args: [holders, [5n, 7n]],
      });
    expect(await reverts(mint())).toContain("AssetPaused");
    // Only the owner sets the bound, and only a positive one.
    expect(
      await reverts(
        read.simulateContract({
          account: stranger,
          address: resolver,
          abi: PriceResolver.abi,
          functionName: "setStalenessBound",
          args: [feed, 60n],
        }),
      ),
    ).toContain("NotOwner");
    const set = (feedAddress: Address, maxAge: bigint) =>
      wallet.writeContract({
        address: resolver,
        abi: PriceResolver.abi,
        functionName: "setStalenessBound",
        args: [feedAddress, maxAge],
      });
    await read.waitForTransactionReceipt({ hash: await set(feed, 60n), pollingInterval: 50 });
    expect(await read.readContract({ address: token, abi: AssetToken.abi, functionName: "paused" })).toBe(
      false,
    );
    expect(
      await read.readContract({
        address: resolver,
        abi: PriceResolver.abi,
        functionName: "maxAgeOf",
        args: [token],
      }),
    ).toBe(60n);
    const { request } = await mint();
    await read.waitForTransactionReceipt({ hash: await wallet.writeContract(request), pollingInterval: 50 });
    expect(
      await read.readContract({ address: token, abi: AssetToken.abi, functionName: "totalSupply" }),
    ).toBe(12n);

    // A second, different feed for the same asset is refused; the same feed may be re-bounded.
    const other = await deploy(PriceFeed.abi, PriceFeed.bytecode, [token, owner.address, 8]);
    expect(
      await reverts(
        read.simulateContract({
          account: owner,
          address: resolver,
          abi: PriceResolver.abi,
          functionName: "setStalenessBound",
          args: [other, 60n],
        }),
      ),
    ).toContain("FeedAlreadySet");
    expect(
      await read.readContract({
        address: resolver,
        abi: PriceResolver.abi,
        functionName: "feedOf",
        args: [token],
      }),
    ).toBe(feed);
    expect(
      await read.readContract({
        address: resolver,
        abi: PriceResolver.abi,
        functionName: "feedOf",
        args: [zeroAddress],
      }),
    ).toBe(zeroAddress);
  });

  it("a feed takes observations from its owner only, as rounds", async () => {
    const feed = await deploy(PriceFeed.abi, PriceFeed.bytecode, [holders[0], owner.address, 8]);
    const read = anvil.public;
    expect(
      await reverts(
        read.readContract({ address: feed, abi: PriceFeed.abi, functionName: "latestRoundData" }),
      ),
    ).toContain("NoObservation");
    expect(
      await reverts(
        read.simulateContract({
          account: stranger,
          address: feed,
          abi: PriceFeed.abi,
          functionName: "submit",
          args: [1n],
        }),
      ),
    ).toContain("NotOwner");
    const hash = await walletOf(owner).writeContract({
      address: feed,
      abi: PriceFeed.abi,
      functionName: "submit",
      args: [123n],
    });
    await read.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    const round = await read.readContract({
      address: feed,
      abi: PriceFeed.abi,
      functionName: "latestRoundData",
    });
    expect([round[0], round[1]]).toEqual([1n, 123n]);
  });
});

import { type Address, createPublicClient, createWalletClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { PriceResolver } from "../../src/chain/contracts/artifacts.js";

/**
 * Deploys a PriceResolver owned by `owner` on the node at `url`, sent by `deployerKey`, and
 * resolves with its address once mined. The dev chain's resolver (the demo asset template names
 * it) and the asset tests' resolvers come from here: platform infrastructure, not asset creation.
 */
export async function deployPriceResolver(options: {
  url: string;
  deployerKey: Hex;
  owner: Address;
}): Promise<Address> {
  const account = privateKeyToAccount(options.deployerKey);
  const transport = http(options.url);
  const wallet = createWalletClient({ account, transport });
  const chainId = await createPublicClient({ transport }).getChainId();
  const hash = await wallet.deployContract({
    abi: PriceResolver.abi,
    bytecode: PriceResolver.bytecode,
    args: [options.owner],
    chain: {
      id: chainId,
      name: "dev",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [options.url] } },
    },
  });
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({
    hash,
    pollingInterval: 100,
  });
  if (!receipt.contractAddress || receipt.status !== "success") {
    throw new Error(`PriceResolver deployment ${hash} failed (${receipt.status})`);
  }
  return receipt.contractAddress;
}

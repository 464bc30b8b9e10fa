import {
  type Address,
  type BaseError,
  ContractFunctionRevertedError,
  createWalletClient,
  getAddress,
  type Hex,
  http,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchId } from "../../../flows/corporate-actions/distributor.js";
import { Distributor, TestToken } from "../../../src/chain/contracts/artifacts.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../support/anvil.js";

/** contracts/Distributor.sol on a real node: pays a batch from its owner once, refuses everything else. */

let anvil: Anvil;
const owner = privateKeyToAccount(ANVIL_KEYS[1]);
const stranger = privateKeyToAccount(ANVIL_KEYS[2]);
const holders: Address[] = [
  "0x1111111111111111111111111111111111111111",
  "0x2222222222222222222222222222222222222222",
];
let token: Address;
let distributor: Address;

function wallet(key: Hex) {
  return createWalletClient({
    account: privateKeyToAccount(key),
    chain: { ...foundry, id: anvil.chainId },
    transport: http(anvil.url),
  });
}

beforeAll(async () => {
  anvil = await startAnvil();
  const minter = wallet(ANVIL_KEYS[0]);
  const tokenTx = await minter.deployContract({
    abi: TestToken.abi,
    bytecode: TestToken.bytecode,
    args: ["P", "P", 6],
  });
  token = (await anvil.public.waitForTransactionReceipt({ hash: tokenTx })).contractAddress as Address;
  await anvil.public.waitForTransactionReceipt({
    hash: await minter.writeContract({
      address: token,
      abi: TestToken.abi,
      functionName: "mint",
      args: [owner.address, 1_000n],
    }),
  });
  // Deployed by someone else: the owner is the constructor argument, not the sender.
  const distributorTx = await minter.deployContract({
    abi: Distributor.abi,
    bytecode: Distributor.bytecode,
    args: [owner.address],
  });
  distributor = (await anvil.public.waitForTransactionReceipt({ hash: distributorTx }))
    .contractAddress as Address;
  await anvil.public.waitForTransactionReceipt({
    hash: await wallet(ANVIL_KEYS[1]).writeContract({
      address: token,
      abi: TestToken.abi,
      functionName: "approve",
      args: [distributor, 2n ** 256n - 1n],
    }),
  });
});
afterAll(async () => {
  await anvil?.stop();
});

/** The custom error a call reverts with at simulation. */
async function revertOf(from: typeof owner, id: Hex, amounts: bigint[]): Promise<string | undefined> {
  try {
    await anvil.public.simulateContract({
      account: from,
      address: distributor,
      abi: Distributor.abi,
      functionName: "distribute",
      args: [id, token, holders, amounts],
    });
    return undefined;
  } catch (error) {
    const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError);
    return (reverted as ContractFunctionRevertedError | null)?.data?.errorName;
  }
}

describe("Distributor", () => {
  it("pays a batch from its owner, records it and emits BatchPaid; a repeat of the batch id is refused", async () => {
    const id = batchId("acme", "a-1", 0);
    const hash = await wallet(ANVIL_KEYS[1]).writeContract({
      address: distributor,
      abi: Distributor.abi,
      functionName: "distribute",
      args: [id, token, holders, [10n, 20n]],
    });
    const receipt = await anvil.public.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    const balances = await Promise.all(
      holders.map((h) =>
        anvil.public.readContract({
          address: token,
          abi: TestToken.abi,
          functionName: "balanceOf",
          args: [h],
        }),
      ),
    );
    expect(balances).toEqual([10n, 20n]);
    expect(
      await anvil.public.readContract({
        address: distributor,
        abi: Distributor.abi,
        functionName: "paid",
        args: [id],
      }),
    ).toBe(true);
    const events = await anvil.public.getContractEvents({
      address: distributor,
      abi: Distributor.abi,
      eventName: "BatchPaid",
    });
    expect(events.map((e) => e.args)).toEqual([
      { batchId: id, token: getAddress(token), count: 2n, total: 30n },
    ]);
    expect(await revertOf(owner, id, [10n, 20n])).toBe("BatchAlreadyPaid");
  });

  it("refuses anyone but the owner, and mismatched lists", async () => {
    expect(await revertOf(stranger, batchId("acme", "a-1", 1), [1n, 1n])).toBe("NotOwner");
    expect(await revertOf(owner, batchId("acme", "a-1", 1), [1n])).toBe("LengthMismatch");
    expect(await revertOf(owner, batchId("acme", "a-1", 1), [1n, 1n])).toBeUndefined();
  });

  it("batch ids differ per organisation, action and index", () => {
    const ids = new Set([
      batchId("acme", "a-1", 0),
      batchId("acme", "a-1", 1),
      batchId("acme", "a-2", 0),
      batchId("beta", "a-1", 0),
    ]);
    expect(ids.size).toBe(4);
  });
});

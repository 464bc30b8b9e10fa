import { createWalletClient, getAddress, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EntryPointDeposits,
  EntryPointReference,
  PaymasterStub,
  TestToken,
} from "../../src/chain/contracts/artifacts.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../support/anvil.js";

/** The checked-in contracts deploy and behave on a real node (anvil). */

let anvil: Anvil;
const account = privateKeyToAccount(ANVIL_KEYS[0]);

beforeAll(async () => {
  anvil = await startAnvil();
});
afterAll(async () => {
  await anvil?.stop();
});

async function deploy(abi: readonly unknown[], bytecode: `0x${string}`, args: readonly unknown[]) {
  const wallet = createWalletClient({
    account,
    chain: { ...foundry, id: anvil.chainId },
    transport: http(anvil.url),
  });
  // biome-ignore lint/suspicious/noExplicitAny: one helper deploys contracts of different ABIs.
  const hash = await wallet.deployContract({ abi: abi as any, bytecode, args: args as any });
  const receipt = await anvil.public.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error("no contract address");
  return { address: receipt.contractAddress, wallet };
}

describe("contracts on anvil", () => {
  it("answers eth_chainId and mines", async () => {
    expect(await anvil.public.getChainId()).toBe(31337);
    const before = await anvil.public.getBlockNumber();
    await anvil.mine(2);
    expect(await anvil.public.getBlockNumber()).toBe(before + 2n);
  });

  it("mints and transfers the ERC-20, and refuses an overdraft with its error", async () => {
    const { address, wallet } = await deploy(TestToken.abi, TestToken.bytecode, ["Bond", "BND", 6]);
    const other = privateKeyToAccount(ANVIL_KEYS[1]).address;
    await anvil.public.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address,
        abi: TestToken.abi,
        functionName: "mint",
        args: [account.address, 1_000n],
      }),
    });
    await anvil.public.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address,
        abi: TestToken.abi,
        functionName: "transfer",
        args: [other, 400n],
      }),
    });
    const read = (who: `0x${string}`) =>
      anvil.public.readContract({ address, abi: TestToken.abi, functionName: "balanceOf", args: [who] });
    expect(await read(account.address)).toBe(600n);
    expect(await read(other)).toBe(400n);
    await expect(
      anvil.public.simulateContract({
        account,
        address,
        abi: TestToken.abi,
        functionName: "transfer",
        args: [other, 601n],
      }),
    ).rejects.toThrow(/InsufficientBalance/);
  });

  it("keeps a paymaster's EntryPoint deposit apart from its ether balance, behind a reference", async () => {
    const entryPoint = await deploy(EntryPointDeposits.abi, EntryPointDeposits.bytecode, []);
    const reference = await deploy(EntryPointReference.abi, EntryPointReference.bytecode, [
      entryPoint.address,
    ]);
    const paymaster = await deploy(PaymasterStub.abi, PaymasterStub.bytecode, [entryPoint.address]);
    const target = await anvil.public.readContract({
      address: reference.address,
      abi: EntryPointReference.abi,
      functionName: "target",
    });
    expect(getAddress(target)).toBe(getAddress(entryPoint.address));
    await anvil.test.setBalance({ address: paymaster.address, value: parseEther("5") });
    const deposit = () =>
      anvil.public.readContract({
        address: entryPoint.address,
        abi: EntryPointDeposits.abi,
        functionName: "balanceOf",
        args: [paymaster.address],
      });
    expect(await deposit()).toBe(0n);
    await anvil.public.waitForTransactionReceipt({
      hash: await paymaster.wallet.writeContract({
        address: paymaster.address,
        abi: PaymasterStub.abi,
        functionName: "deposit",
        value: parseEther("1"),
      }),
    });
    expect(await deposit()).toBe(parseEther("1"));
  });
});

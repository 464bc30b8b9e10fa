import { createWalletClient, getAddress, getContractAddress, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EntryPointDeposits,
  EntryPointReference,
  PaymasterStub,
  SimpleAccount,
} from "../../src/chain/contracts/artifacts.js";
import { watchOnce } from "../../src/chain/watcher/confirmation-watcher.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * A paymaster-funded write (a UserOperation of a smart account) waits for the paymaster's deposit
 * in the EntryPoint, which the chain configures through a reference contract: the resolved
 * EntryPoint is the one read, and ether sent to the paymaster's own address does not count.
 */

let world: ChainWorld;
const deployer = privateKeyToAccount(ANVIL_KEYS[0]);
// Fresh anvil: the deployer's first three transactions create these.
const entryPoint = getContractAddress({ from: deployer.address, nonce: 0n });
const reference = getContractAddress({ from: deployer.address, nonce: 1n });
const paymaster = getContractAddress({ from: deployer.address, nonce: 2n });
const account = getContractAddress({ from: deployer.address, nonce: 3n });
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({ file: import.meta.url, chain: { entryPoint: reference } });
  const wallet = createWalletClient({ account: deployer, chain: foundry, transport: http(world.anvil.url) });
  for (const hash of [
    await wallet.deployContract({ abi: EntryPointDeposits.abi, bytecode: EntryPointDeposits.bytecode }),
    await wallet.deployContract({
      abi: EntryPointReference.abi,
      bytecode: EntryPointReference.bytecode,
      args: [entryPoint],
    }),
    await wallet.deployContract({
      abi: PaymasterStub.abi,
      bytecode: PaymasterStub.bytecode,
      args: [entryPoint],
    }),
    await wallet.deployContract({
      abi: SimpleAccount.abi,
      bytecode: SimpleAccount.bytecode,
      args: [entryPoint, world.hot],
    }),
  ]) {
    await world.anvil.public.waitForTransactionReceipt({ hash });
  }
});
afterAll(async () => {
  await world?.stop();
});

describe("paymaster gas funding", () => {
  it("waits on the deposit in the resolved EntryPoint; the paymaster's ether balance does not count", async () => {
    await world.anvil.test.setBalance({ address: account, value: 1n });
    const id = await world.send({
      account,
      to: recipient,
      valueWei: "1",
      paymaster,
      fundingDeadline: new Date(Date.now() + 60_000).toISOString(),
    });
    const waiting = await world.engine.waitForView(
      id,
      (v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "funding",
      "a funding wait",
    );
    expect(waiting.waitingFor?.[0]?.details?.destination).toEqual({
      kind: "entryPointDeposit",
      entryPoint: getAddress(entryPoint),
      account: paymaster,
    });
    await world.anvil.test.setBalance({ address: paymaster, value: parseEther("100") });
    const chain = world.chains.get(world.anvil.chainId);
    const options = {
      pool: world.engine.pool,
      executions: { signalMany: async () => new Map() },
      chains: world.chains,
      owns: (executionId: string) => executionId === id,
      logger: world.engine.logger,
    };
    expect(await watchOnce(options, chain)).toBe(0);
    const wallet = createWalletClient({
      account: deployer,
      chain: foundry,
      transport: http(world.anvil.url),
    });
    await world.anvil.public.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: paymaster,
        abi: PaymasterStub.abi,
        functionName: "deposit",
        value: parseEther("1"),
      }),
    });
    const view = await world.settled(id);
    expect(view.output).toMatchObject({ verdict: "confirmed", userOperation: { paymaster } });
    // The account held exactly the value: the gas came from the deposit.
    expect(await world.anvil.public.getBalance({ address: account })).toBe(0n);
  });
});

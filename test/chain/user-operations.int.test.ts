import {
  type Abi,
  type Address,
  createWalletClient,
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  type Hex,
  http,
  parseEther,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attributionSuffix } from "../../src/chain/attribution.js";
import {
  EntryPointDeposits,
  EntryPointReference,
  PaymasterStub,
  SimpleAccount,
  TestToken,
} from "../../src/chain/contracts/artifacts.js";
import { ChainClients } from "../../src/chain/rpc-clients.js";
import {
  buildUserOperation,
  handleOpsCall,
  hashUserOperation,
} from "../../src/chain/user-operations/user-operation.js";
import { chainSchema } from "../../src/config/chains-schema.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * ERC-4337 UserOperations through the lifecycle on a real anvil: the resolved EntryPoint (the chain
 * configures a reference), the owner's signature, simulation, `handleOps`, and the outcome read
 * from `UserOperationEvent`. With a paymaster its EntryPoint deposit pays the gas.
 */

let world: ChainWorld;
const deployer = privateKeyToAccount(ANVIL_KEYS[0]);
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;
// Fresh anvil: the deployer's transactions create these, in this order.
const at = (nonce: bigint) => getContractAddress({ from: deployer.address, nonce });
const entryPoint = at(0n);
const reference = at(1n);
const paymaster = at(2n);
const account = at(3n); // owned by the `hot` signer
const token = at(4n);
const foreignAccount = at(5n); // owned by the deployer, not by `hot`
const secondEntryPoint = at(6n);

let wallet: ReturnType<typeof createWalletClient>;

async function mined(hash: Hex) {
  return world.anvil.public.waitForTransactionReceipt({ hash });
}

async function deploy(abi: Abi, bytecode: Hex, args: unknown[] = []): Promise<Address> {
  const receipt = await mined(
    await wallet.deployContract({ abi, bytecode, args, account: deployer, chain: wallet.chain ?? null }),
  );
  return receipt.contractAddress as Address;
}

/** One ether into `sponsor`'s deposit in the EntryPoint, through the paymaster contract. */
async function fundDeposit(sponsor: Address) {
  await mined(
    await wallet.writeContract({
      address: sponsor,
      abi: PaymasterStub.abi,
      functionName: "deposit",
      value: parseEther("1"),
      account: deployer,
      chain: wallet.chain ?? null,
    }),
  );
}

const deposit = (of: Address, in_: Address = entryPoint) =>
  world.anvil.public.readContract({
    address: in_,
    abi: EntryPointDeposits.abi,
    functionName: "balanceOf",
    args: [of],
  });

beforeAll(async () => {
  world = await startChainWorld({ file: import.meta.url, chain: { entryPoint: reference } });
  wallet = createWalletClient({
    account: deployer,
    chain: { ...foundry, id: world.anvil.chainId },
    transport: http(world.anvil.url),
  });
  await deploy(EntryPointDeposits.abi, EntryPointDeposits.bytecode);
  await deploy(EntryPointReference.abi, EntryPointReference.bytecode, [entryPoint]);
  await deploy(PaymasterStub.abi, PaymasterStub.bytecode, [entryPoint]);
  await deploy(SimpleAccount.abi, SimpleAccount.bytecode, [entryPoint, world.hot]);
  await deploy(TestToken.abi, TestToken.bytecode, ["T", "T", 0]);
  await deploy(SimpleAccount.abi, SimpleAccount.bytecode, [entryPoint, deployer.address]);
  await deploy(EntryPointDeposits.abi, EntryPointDeposits.bytecode);
  await world.anvil.test.setBalance({ address: account, value: parseEther("1") });
  await fundDeposit(paymaster);
});
afterAll(async () => {
  await world?.stop();
});

describe("UserOperations through the resolved EntryPoint", () => {
  it("with a paymaster, its EntryPoint deposit pays the gas; the account pays only the value", async () => {
    const depositBefore = await deposit(paymaster);
    const recipientBefore = await world.anvil.public.getBalance({ address: recipient });
    const id = await world.send({
      account,
      paymaster,
      to: recipient,
      valueWei: "1000",
      attribution: ["tenor"],
    });
    const view = await world.settled(id);
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    const output = view.output as {
      verdict: string;
      hash: Hex;
      userOperation: { hash: Hex; paymaster: Address; sender: Address; actualGasCostWei: string };
    };
    expect(output).toMatchObject({
      verdict: "confirmed",
      userOperation: { sender: account, paymaster: getAddress(paymaster) },
    });
    const cost = BigInt(output.userOperation.actualGasCostWei);
    expect(cost).toBeGreaterThan(0n);
    expect(await deposit(paymaster)).toBe(depositBefore - cost);
    expect(await world.anvil.public.getBalance({ address: account })).toBe(parseEther("1") - 1000n);
    expect(await deposit(account)).toBe(0n);
    expect(await world.anvil.public.getBalance({ address: recipient })).toBe(recipientBefore + 1000n);

    // The bundle went to the resolved EntryPoint, never the configured reference; the hash the
    // lifecycle computed is the contract's own; the ERC-8021 suffix ends the operation's callData.
    const tx = await world.anvil.public.getTransaction({ hash: output.hash });
    expect(getAddress(tx.to as Address)).toBe(getAddress(entryPoint));
    const { args } = decodeFunctionData({ abi: EntryPointDeposits.abi, data: tx.input });
    const [ops] = args as unknown as [{ callData: Hex }[]];
    const onChainHash = await world.anvil.public.readContract({
      address: entryPoint,
      abi: EntryPointDeposits.abi,
      functionName: "getUserOpHash",
      args: [ops[0] as never],
    });
    expect(onChainHash).toBe(output.userOperation.hash);
    expect(ops[0]?.callData.endsWith(attributionSuffix(["tenor"]).slice(2))).toBe(true);
  });

  it("ends USER_OPERATION_REVERTED (verdict reverted) when the operation's call fails, and never re-sends it", async () => {
    // The account holds no tokens; the gas limit is given, so nothing estimates (and refuses) it first.
    const data = encodeFunctionData({ abi: TestToken.abi, functionName: "transfer", args: [recipient, 5n] });
    const id = await world.send({ account, paymaster, to: token, data, gasLimit: "100000" });
    const view = await world.settled(id);
    expect(view.status).toBe("failed");
    expect(view.failure).toMatchObject({
      code: "USER_OPERATION_REVERTED",
      details: { verdict: "reverted", sender: account, revertReason: expect.stringMatching(/^0x/) },
    });
    const journal = await world.engine.client.journal(id);
    expect(journal.filter((e) => e.name.startsWith("broadcast:"))).toHaveLength(1);
  });

  it("refuses an operation the EntryPoint's validation rejects (simulated), before any bundle is sent", async () => {
    // `hot` is not this account's owner: the account answers SIG_VALIDATION_FAILED.
    await world.anvil.test.setBalance({ address: foreignAccount, value: parseEther("1") });
    const id = await world.send({ account: foreignAccount, paymaster, to: recipient, valueWei: "1" });
    const view = await world.settled(id);
    expect(view.failure).toMatchObject({
      code: "USER_OPERATION_REFUSED",
      details: { reason: "AA24 signature error", verdict: "rejected" },
    });
    const journal = await world.engine.client.journal(id);
    expect(journal.some((e) => e.name.startsWith("broadcast:"))).toBe(false);
  });

  it("refuses at once an operation whose call would revert when nothing gives its gas limit", async () => {
    const id = await world.send({ account, paymaster, to: recipient, valueWei: parseEther("5").toString() });
    const view = await world.settled(id);
    expect(view.failure).toMatchObject({ code: "USER_OPERATION_REFUSED", details: { verdict: "rejected" } });
    expect(view.recoveryAttempts).toBe(0);
  });

  it("refuses a paymaster without an account: a plain transaction's sender always pays", async () => {
    const view = await world.settled(await world.send({ paymaster, to: recipient, valueWei: "1" }));
    expect(view.failure).toMatchObject({ code: "USER_OPERATION_REFUSED", details: { field: "paymaster" } });
  });

  it("refuses a submission that names the configured reference instead of the resolved EntryPoint", () => {
    const op = buildUserOperation({
      sender: account,
      nonce: 0n,
      callData: "0x",
      callGasLimit: 50_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    expect(() =>
      handleOpsCall(op, world.hot, { named: reference, resolved: entryPoint, configured: reference }),
    ).toThrow(expect.objectContaining({ code: "ENTRYPOINT_NOT_RESOLVED_ADDRESS" }));
    // The hash binds the EntryPoint: the same operation for the reference is another operation.
    expect(hashUserOperation(op, reference, world.anvil.chainId)).not.toBe(
      hashUserOperation(op, entryPoint, world.anvil.chainId),
    );
  });

  it("replays the EntryPoint it recorded, even when the configuration now resolves elsewhere", async () => {
    // A paymaster without a deposit yet: the execution records its EntryPoint, then waits.
    const lonePaymaster = await deploy(PaymasterStub.abi, PaymasterStub.bytecode, [entryPoint]);
    const id = await world.send({
      account,
      paymaster: lonePaymaster,
      to: recipient,
      valueWei: "1",
      fundingDeadline: new Date(Date.now() + 60_000).toISOString(),
    });
    await world.engine.waitForView(
      id,
      (v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "funding",
      "the paymaster funding wait",
    );
    // The deployment now configures another EntryPoint; this execution recorded the first.
    const repointed = rebindWithEntryPoint(secondEntryPoint);
    try {
      await fundDeposit(lonePaymaster);
      const view = await world.settled(id);
      expect(view.status, JSON.stringify(view.failure)).toBe("completed");
      const tx = await world.anvil.public.getTransaction({ hash: (view.output as { hash: Hex }).hash });
      expect(getAddress(tx.to as Address)).toBe(getAddress(entryPoint));
    } finally {
      await repointed();
    }
  });
});

/** Points the world's chain access at a chain configuration naming `configured` as its EntryPoint. */
function rebindWithEntryPoint(configured: Address): () => Promise<void> {
  const previous = world.chainAccess.chains;
  world.chainAccess.chains = new ChainClients({
    chains: [
      chainSchema.parse({
        id: world.anvil.chainId,
        name: "anvil",
        rpcUrls: [world.anvil.url],
        entryPoint: configured,
      }),
    ],
    durable: world.engine.config.durable,
  });
  return async () => {
    world.chainAccess.chains = previous;
  };
}

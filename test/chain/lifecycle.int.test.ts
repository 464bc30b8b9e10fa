import { createWalletClient, encodeFunctionData, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attributionSuffix } from "../../src/chain/attribution.js";
import { TestToken } from "../../src/chain/contracts/artifacts.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/** The lifecycle with a local key signer on a real anvil (automine). */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({ file: import.meta.url, signers: { poor: 4, reverter: 5 } });
});
afterAll(async () => {
  await world?.stop();
});

describe("transaction lifecycle (local key)", () => {
  it("reserves a nonce, journals the signed bytes before broadcast, and ends confirmed", async () => {
    const before = await world.anvil.public.getBalance({ address: recipient });
    const id = await world.send({ to: recipient, valueWei: "1000", attribution: ["tenor", "acme"] });
    const view = await world.settled(id);
    expect(view.status, JSON.stringify(view)).toBe("completed");
    expect(view.output).toMatchObject({ verdict: "confirmed", nonce: 0, attempts: 1, from: world.hot });
    expect(view.progress).toMatchObject({ milestone: 3, stage: "final", verdict: "confirmed" });
    expect(await world.anvil.public.getBalance({ address: recipient })).toBe(before + 1000n);
    const journal = await world.engine.client.journal(id);
    const names = journal.map((e) => e.name);
    expect(names.indexOf("sign:0")).toBeLessThan(names.indexOf("broadcast:0"));
    expect(names.indexOf("nonce.reserve")).toBeLessThan(names.indexOf("sign:0"));
    const tx = await world.anvil.public.getTransaction({
      hash: (view.output as { hash: `0x${string}` }).hash,
    });
    // The ERC-8021 suffix is the calldata's tail, once.
    expect(tx.input).toBe(attributionSuffix(["tenor", "acme"]));
  });

  it("fails with GAS_REQUIRED naming the shortfall when the payer cannot pay and may not wait", async () => {
    const poor = privateKeyToAccount(ANVIL_KEYS[4]).address;
    await world.anvil.test.setBalance({ address: poor, value: 1000n });
    const id = await world.send({ signerId: "poor", to: recipient, valueWei: "1" });
    const view = await world.settled(id);
    expect(view.status).toBe("failed");
    expect(view.failure).toMatchObject({
      code: "GAS_REQUIRED",
      details: { availableWei: "1000", verdict: "rejected", destination: { kind: "balance", address: poor } },
    });
  });

  it("waits for gas funding (status waiting, kind funding) and resumes when the payer is funded", async () => {
    const poor = privateKeyToAccount(ANVIL_KEYS[4]).address;
    await world.anvil.test.setBalance({ address: poor, value: 0n });
    const deadline = new Date(Date.now() + 60_000).toISOString();
    const id = await world.send({
      signerId: "poor",
      to: recipient,
      valueWei: "5",
      fundingDeadline: deadline,
    });
    const waiting = await world.engine.waitForView(
      id,
      (v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "funding",
      "a funding wait",
    );
    const wait = waiting.waitingFor?.[0];
    expect(wait).toMatchObject({ name: "gas", until: expect.any(String) });
    expect(wait?.details).toMatchObject({
      destination: { kind: "balance", address: poor },
      availableWei: "0",
    });
    const required = BigInt(String(wait?.details?.requiredWei));
    expect(required).toBeGreaterThan(5n);
    // Less than required does not resume it.
    await world.anvil.test.setBalance({ address: poor, value: required - 1n });
    await world.anvil.test.setBalance({ address: poor, value: parseEther("1") });
    const view = await world.settled(id);
    expect(view.output).toMatchObject({ verdict: "confirmed" });
  });

  it("ends with GAS_REQUIRED (expired) when no funding arrives before the deadline", async () => {
    const poor = privateKeyToAccount(ANVIL_KEYS[4]).address;
    await world.anvil.test.setBalance({ address: poor, value: 0n });
    const id = await world.send({
      signerId: "poor",
      to: recipient,
      valueWei: "5",
      fundingDeadline: new Date(Date.now() + 1_500).toISOString(),
    });
    const view = await world.settled(id);
    expect(view.failure).toMatchObject({ code: "GAS_REQUIRED", details: { verdict: "expired" } });
  });

  it("ends reverted, not confirmed, when the call reverts on chain", async () => {
    const wallet = createWalletClient({
      account: privateKeyToAccount(ANVIL_KEYS[0]),
      chain: { ...foundry, id: world.anvil.chainId },
      transport: http(world.anvil.url),
    });
    const hash = await wallet.deployContract({
      abi: TestToken.abi,
      bytecode: TestToken.bytecode,
      args: ["T", "T", 0],
    });
    const token = (await world.anvil.public.waitForTransactionReceipt({ hash }))
      .contractAddress as `0x${string}`;
    // A transfer of tokens the sender does not have; the gas limit is given, so nothing simulates it first.
    const data = encodeFunctionData({ abi: TestToken.abi, functionName: "transfer", args: [recipient, 5n] });
    const id = await world.send({ signerId: "reverter", to: token, data, gasLimit: "100000" });
    const view = await world.settled(id);
    expect(view.status).toBe("completed");
    expect(view.output).toMatchObject({ verdict: "reverted" });
  });
});

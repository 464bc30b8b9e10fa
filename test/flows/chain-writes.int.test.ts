import { type Address, encodeDeployData, encodeFunctionData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { deployContract, writeContract } from "../../flows/support/chain-writes.js";
import { TestToken } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type ChainWorld, startChainWorld } from "../chain/support/chain-world.js";
import { ANVIL_KEYS } from "../support/anvil.js";

/** A domain workflow deploying a contract by CREATE2 and calling it, through the lifecycle. */
const deployAndMint = defineWorkflow({
  name: "test.deploy-and-mint",
  version: 1,
  // deployContract looks for the contract's code first, through the chain access.
  services: [chainAccessService],
  input: z.object({ chainId: z.number(), salt: z.string(), holder: z.string() }),
  output: z.object({ token: z.string(), sent: z.boolean(), orgId: z.string() }),
  async run(ctx, input) {
    const token = await deployContract(ctx, "token.deploy", {
      chainId: input.chainId,
      signerId: "hot",
      salt: input.salt,
      initCode: encodeDeployData({
        abi: TestToken.abi,
        bytecode: TestToken.bytecode,
        args: ["Test", "TST", 18],
      }),
    });
    // CREATE2: msg.sender of the constructor is the deployer, so owner-only calls are not open here.
    await writeContract(ctx, "token.approve", {
      chainId: input.chainId,
      signerId: "hot",
      to: token.address,
      data: encodeFunctionData({
        abi: TestToken.abi,
        functionName: "approve",
        args: [input.holder as Address, 5n],
      }),
    });
    return { token: token.address, sent: token.transaction !== null, orgId: ctx.orgId };
  },
});

/** One plain write from a chosen signer. */
const payOnce = defineWorkflow({
  name: "test.pay-once",
  version: 1,
  input: z.object({ chainId: z.number(), signerId: z.string(), to: z.string() }),
  output: z.object({ hash: z.string() }),
  async run(ctx, input) {
    const sent = await writeContract(ctx, "payment.send", {
      chainId: input.chainId,
      signerId: input.signerId,
      to: input.to as Address,
      data: "0x",
      valueWei: "1",
    });
    return { hash: sent.hash };
  },
});

let world: ChainWorld;
beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    workflows: [deployAndMint, payOnce],
    signers: { poor: 4 },
  });
});
afterAll(async () => {
  await world?.stop();
});

describe("domain chain writes", () => {
  it("deploys once per salt: a second execution with the same salt finds the contract and sends no deployment", async () => {
    const holder = world.hot;
    const first = await world.settled(
      await world.start(deployAndMint.name, { chainId: world.anvil.chainId, salt: "acme:t1", holder }),
    );
    expect(first.status, JSON.stringify(first)).toBe("completed");
    expect(first.output).toMatchObject({ sent: true, orgId: "acme" });
    const token = (first.output as { token: Address }).token;
    const second = await world.settled(
      await world.start(deployAndMint.name, { chainId: world.anvil.chainId, salt: "acme:t1", holder }),
    );
    expect(second.output).toMatchObject({ token, sent: false });
    // Both executions' calls landed, on the one contract.
    const allowance = await world.anvil.public.readContract({
      address: token,
      abi: TestToken.abi,
      functionName: "allowance",
      args: [world.hot, holder],
    });
    expect(allowance).toBe(5n);
    const receipts = await world.engine.pool.query(
      "SELECT count(*)::int AS n FROM executions WHERE workflow = 'chain.transaction' AND status = 'completed'",
    );
    expect(receipts.rows[0].n).toBe(3);
  });

  it("a failed write fails the domain workflow with the write's own code, naming the step and the write", async () => {
    const poor = privateKeyToAccount(ANVIL_KEYS[4]).address;
    await world.anvil.test.setBalance({ address: poor, value: 1000n });
    const id = await world.start(payOnce.name, {
      chainId: world.anvil.chainId,
      signerId: "poor",
      to: world.hot,
    });
    const view = await world.settled(id);
    expect(view.status).toBe("failed");
    expect(view.failure).toMatchObject({
      code: "GAS_REQUIRED",
      message: expect.stringMatching(/^payment\.send: /),
      details: {
        step: "payment.send",
        childExecutionId: expect.any(String),
        availableWei: "1000",
        verdict: "rejected",
      },
    });
    const childExecutionId = String(view.failure?.details.childExecutionId);
    const write = await world.engine.client.view(childExecutionId);
    expect(write).toMatchObject({ workflow: "chain.transaction", parentId: id, status: "failed" });
    expect(write?.failure?.code).toBe("GAS_REQUIRED");
  });
});

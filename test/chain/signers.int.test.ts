import { inspect } from "node:util";
import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCustodyHttpSigner } from "../../src/chain/signers/custody-http-signer.js";
import { createLocalKeySigner } from "../../src/chain/signers/local-key-signer.js";
import type { CustodySigner } from "../../src/chain/signers/signer.js";
import { Secret } from "../../src/config/secret.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../support/anvil.js";
import { type CustodySimulator, startCustodySimulator } from "../support/custody-simulator.js";
import { waitUntil } from "../support/processes.js";

/** Both signer kinds against a real node: a local key, and the custody adapter over real HTTP. */

let anvil: Anvil;
let sim: CustodySimulator;
let custody: CustodySigner;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;
let ids = 0;
const intent = () => ({
  externalId: `op-${++ids}`,
  chainId: 31337,
  to: recipient,
  data: "0x" as const,
  valueWei: "1000",
});

beforeAll(async () => {
  anvil = await startAnvil();
  sim = await startCustodySimulator({
    rpcUrl: anvil.url,
    chainId: anvil.chainId,
    privateKey: ANVIL_KEYS[2],
    publicClient: anvil.public,
  });
  custody = createCustodyHttpSigner({
    id: "vault",
    orgId: "acme",
    address: sim.address,
    baseUrl: sim.url,
    apiKey: new Secret(sim.apiKey, "test"),
    requestTimeoutMs: 300,
    pollBudget: 5,
    pollIntervalMs: 50,
  });
});

afterAll(async () => {
  await sim?.stop();
  await anvil?.stop();
});

describe("local key signer", () => {
  it("signs a transaction the node accepts, and never shows its key", async () => {
    const signer = createLocalKeySigner({
      id: "hot",
      orgId: undefined,
      privateKey: new Secret(ANVIL_KEYS[1], "env:K"),
    });
    expect(signer.address).toBe(privateKeyToAccount(ANVIL_KEYS[1]).address);
    for (const printed of [inspect(signer, { depth: 5 }), JSON.stringify(signer)]) {
      expect(printed).not.toContain(ANVIL_KEYS[1].slice(2));
    }
    const fees = await anvil.public.estimateFeesPerGas();
    const raw = await signer.signTransaction({
      chainId: anvil.chainId,
      type: "eip1559",
      nonce: await anvil.public.getTransactionCount({ address: signer.address }),
      to: recipient,
      value: parseEther("0.1"),
      gas: 21_000n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const hash = await anvil.public.sendRawTransaction({ serializedTransaction: raw });
    expect((await anvil.public.waitForTransactionReceipt({ hash })).status).toBe("success");
  });

  it("refuses a malformed key naming its source, not its value", () => {
    expect(() =>
      createLocalKeySigner({ id: "bad", orgId: undefined, privateKey: new Secret("0x1234", "file:/k") }),
    ).toThrow(/file:\/k/);
  });
});

describe("custody adapter against the simulator", () => {
  it("waits for approval, then the provider broadcasts and reports the hash", async () => {
    const op = intent();
    expect(await custody.submit(op)).toEqual({ status: "pending_approval" });
    // Resubmitting the same external id creates nothing new.
    expect(await custody.submit(op)).toEqual({ status: "pending_approval" });
    expect(sim.intents().filter((i) => i.externalId === op.externalId)).toHaveLength(1);
    await sim.approve(op.externalId);
    const confirmed = await waitUntil("confirmed", async () => {
      const state = await custody.status(op.externalId);
      return state.status === "confirmed" ? state : undefined;
    });
    const receipt = await anvil.public.getTransactionReceipt({ hash: confirmed.txHash });
    expect(receipt.from.toLowerCase()).toBe(sim.address.toLowerCase());
  });

  it("reports a rejection with its reason", async () => {
    const op = intent();
    await custody.submit(op);
    sim.reject(op.externalId, "limit exceeded");
    expect(await custody.status(op.externalId)).toEqual({ status: "rejected", reason: "limit exceeded" });
  });

  it("recovers a hash whose submit response was lost, by the external id", async () => {
    sim.setDefaultMode("loseSubmitResponse");
    const op = intent();
    await expect(custody.submit(op)).rejects.toMatchObject({ code: "CUSTODY_UNAVAILABLE", retryable: true });
    sim.setDefaultMode("normal");
    const state = await waitUntil("confirmed", async () => {
      const s = await custody.status(op.externalId);
      return s.status === "confirmed" ? s : undefined;
    });
    expect(state).toMatchObject({ status: "confirmed", txHash: sim.intent(op.externalId)?.txHash });
  });

  it("shows a silently dropped intent as approved and never broadcast", async () => {
    sim.setDefaultMode("drop");
    const op = intent();
    await custody.submit(op);
    sim.setDefaultMode("normal");
    for (let i = 0; i < 3; i++) expect(await custody.status(op.externalId)).toEqual({ status: "approved" });
  });

  it("classifies 5xx and timeouts as retryable, a refusal and an unknown id otherwise", async () => {
    sim.failNext(1, 503);
    await expect(custody.status("op-1")).rejects.toMatchObject({
      code: "CUSTODY_UNAVAILABLE",
      retryable: true,
    });
    sim.hangNext(1);
    await expect(custody.status("op-1")).rejects.toMatchObject({
      code: "CUSTODY_UNAVAILABLE",
      retryable: true,
    });
    expect(await custody.status("never-submitted")).toEqual({ status: "unknown" });
    const wrongKey = createCustodyHttpSigner({
      id: "vault",
      orgId: undefined,
      address: sim.address,
      baseUrl: sim.url,
      apiKey: new Secret("wrong", "test"),
      requestTimeoutMs: 300,
      pollBudget: 1,
      pollIntervalMs: 50,
    });
    await expect(wrongKey.status("op-1")).rejects.toMatchObject({
      code: "CUSTODY_REFUSED",
      retryable: false,
    });
  });
});

import { createPublicClient, http, type PublicClient, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANVIL_KEYS, type Anvil, startAnvil } from "./anvil.js";
import { METHOD_NOT_FOUND, type RpcProxy, startRpcProxy } from "./rpc-proxy.js";

/** The fault proxy forwards to a real anvil, and each rule does what it says and nothing more. */
describe("JSON-RPC fault proxy", () => {
  let anvil: Anvil;
  let proxy: RpcProxy;
  let client: PublicClient;
  const sender = privateKeyToAccount(ANVIL_KEYS[5]);

  beforeAll(async () => {
    anvil = await startAnvil();
    proxy = await startRpcProxy(anvil.url);
    client = createPublicClient({
      chain: foundry,
      transport: http(proxy.url, { retryCount: 0, timeout: 1_000 }),
      cacheTime: 0,
    }) as PublicClient;
  });
  afterAll(async () => {
    await proxy?.stop();
    await anvil?.stop();
  });

  async function signedTransfer(nonce: number) {
    const raw = await sender.signTransaction({
      chainId: foundry.id,
      type: "eip1559",
      nonce,
      to: sender.address,
      value: parseEther("0.001"),
      gas: 21_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    return raw;
  }

  it("forwards what no rule takes, and logs every call", async () => {
    proxy.clear();
    expect(await client.getChainId()).toBe(anvil.chainId);
    expect(proxy.calls("eth_chainId").length).toBeGreaterThan(0);
  });

  it("answers an error without the node seeing the call, a bounded number of times", async () => {
    proxy.clear();
    const rule = proxy.on("eth_blockNumber", { error: METHOD_NOT_FOUND }, { times: 1 });
    await expect(client.getBlockNumber()).rejects.toThrow(/does not exist/);
    expect(rule.taken).toBe(1);
    expect(await client.getBlockNumber()).toBe(await anvil.public.getBlockNumber());
  });

  it("rewrites the node's result", async () => {
    proxy.clear();
    const head = await anvil.public.getBlockNumber();
    proxy.on("eth_blockNumber", { rewrite: (result) => `0x${(BigInt(result as string) + 5n).toString(16)}` });
    expect(await client.getBlockNumber()).toBe(head + 5n);
  });

  it("forwards a send and then fails it: the node holds the transaction, the client saw an error", async () => {
    proxy.clear();
    const nonce = await anvil.public.getTransactionCount({ address: sender.address, blockTag: "pending" });
    proxy.on("eth_sendRawTransaction", { forward: true, answer: { httpStatus: 502 } }, { times: 1 });
    const raw = await signedTransfer(nonce);
    await expect(client.sendRawTransaction({ serializedTransaction: raw })).rejects.toThrow();
    expect(await anvil.public.getTransactionCount({ address: sender.address, blockTag: "pending" })).toBe(
      nonce + 1,
    );
  });

  it("hangs a call until the client gives up, without the node seeing it", async () => {
    proxy.clear();
    const nonce = await anvil.public.getTransactionCount({ address: sender.address, blockTag: "pending" });
    proxy.on("eth_sendRawTransaction", { hang: true }, { times: 1 });
    await expect(
      client.sendRawTransaction({ serializedTransaction: await signedTransfer(nonce) }),
    ).rejects.toThrow();
    expect(await anvil.public.getTransactionCount({ address: sender.address, blockTag: "pending" })).toBe(
      nonce,
    );
  });

  it("takes only calls whose params match", async () => {
    proxy.clear();
    proxy.on(
      "eth_getBalance",
      { result: "0x0" },
      { when: (params) => String(params[0]).toLowerCase() === sender.address.toLowerCase() },
    );
    expect(await client.getBalance({ address: sender.address })).toBe(0n);
    const other = privateKeyToAccount(ANVIL_KEYS[6]).address;
    expect(await client.getBalance({ address: other })).toBeGreaterThan(0n);
  });
});

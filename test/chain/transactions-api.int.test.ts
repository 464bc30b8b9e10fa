import request from "supertest";
import { encodeDeployData, getAddress, getContractAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestToken } from "../../src/chain/contracts/artifacts.js";
import { MAX_INITCODE_BYTES } from "../../src/chain/lifecycle/transaction-schemas.js";
import type { createPlatformApi } from "../../src/roles/platform-api.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, chainWorldApi, integratorKeys, startChainWorld } from "./support/chain-world.js";

/** `POST /v1/chains/{chainId}/transactions` end to end: the Platform API, the lifecycle, a real anvil. */

let world: ChainWorld;
let api: ReturnType<typeof createPlatformApi>;
let acmeKey: string;
let otherKey: string;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({ file: import.meta.url });
  api = chainWorldApi(world);
  ({ acme: acmeKey, globex: otherKey } = await integratorKeys(api));
});
afterAll(async () => {
  await api?.close();
  await world?.stop();
});

const post = (key: string, chainId: number, body: unknown, idempotencyKey?: string) => {
  const req = request(api.app)
    .post(`/v1/chains/${chainId}/transactions`)
    .set("authorization", `Bearer ${key}`);
  if (idempotencyKey) req.set("idempotency-key", idempotencyKey);
  return req.send(body as object);
};

describe("POST /v1/chains/{chainId}/transactions", () => {
  it("starts the lifecycle for the key's organisation and shows milestone, hash, nonce and verdict", async () => {
    const res = await post(
      acmeKey,
      world.anvil.chainId,
      { signerId: "hot", to: recipient, valueWei: "7" },
      "tx-1",
    );
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ workflow: "chain.transaction" });
    const id = res.body.id as string;
    const view = await world.settled(id);
    expect(view.output).toMatchObject({
      verdict: "confirmed",
      nonce: expect.any(Number),
      hash: expect.any(String),
    });
    expect(view.progress).toMatchObject({ milestone: 3, verdict: "confirmed" });
    const replay = await post(
      acmeKey,
      world.anvil.chainId,
      { signerId: "hot", to: recipient, valueWei: "7" },
      "tx-1",
    );
    expect(replay.status).toBe(202);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body.id).toBe(id);
  });

  it("refuses an organisation in the body and malformed value fields with field errors", async () => {
    const withOrg = await post(acmeKey, world.anvil.chainId, {
      signerId: "hot",
      to: recipient,
      orgId: "globex",
    });
    expect(withOrg.status).toBe(400);
    expect(withOrg.body.code).toBe("REQUEST_INVALID");
    const badValue = await post(acmeKey, world.anvil.chainId, {
      signerId: "hot",
      to: recipient,
      valueWei: "1.5",
    });
    expect(badValue.status).toBe(400);
    expect(JSON.stringify(badValue.body.errors)).toContain("body.valueWei");
    // A paymaster pays only for a UserOperation: without `account` the sender would pay anyway.
    const paymasterAlone = await post(acmeKey, world.anvil.chainId, {
      signerId: "hot",
      to: recipient,
      paymaster: recipient,
    });
    expect(paymasterAlone.status).toBe(400);
    expect(paymasterAlone.body.errors).toEqual([
      expect.objectContaining({ pointer: "body.paymaster", message: expect.stringContaining("account") }),
    ]);
  });

  it("never lets another organisation use a signer that is not theirs", async () => {
    const res = await post(otherKey, world.anvil.chainId, { signerId: "hot", to: recipient, valueWei: "1" });
    expect(res.status).toBe(202);
    const view = await world.settled(res.body.id as string);
    expect(view.failure).toMatchObject({ code: "SIGNER_UNKNOWN" });
  });

  it("refuses a chain that is not configured with CHAIN_UNKNOWN naming the value and the configured ids", async () => {
    const res = await post(acmeKey, 999_999, { signerId: "hot", to: recipient, valueWei: "1" }, "tx-unknown");
    expect(res.status).toBe(404);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.body).toMatchObject({
      code: "CHAIN_UNKNOWN",
      details: { chainId: 999_999, configured: [world.anvil.chainId] },
    });
    expect(res.body.detail).toContain("999999");
    // Nothing was started under that key: the same key on a configured chain starts a fresh execution.
    const ok = await post(
      acmeKey,
      world.anvil.chainId,
      { signerId: "hot", to: recipient, valueWei: "1" },
      "tx-unknown",
    );
    expect(ok.status).toBe(202);
    expect(ok.headers["idempotent-replayed"]).toBeUndefined();
    // Settled here, so its nonce is not taken after the next test's deployment.
    expect((await world.settled(ok.body.id as string)).output).toMatchObject({ verdict: "confirmed" });
  });
});

describe("POST /v1/chains/{chainId}/transactions without `to`: a contract deployment", () => {
  const initCode = encodeDeployData({
    abi: TestToken.abi,
    bytecode: TestToken.bytecode,
    args: ["Deployed", "DPL", 6],
  });

  it("signs, sends and confirms the creation and reports the receipt's contract address; a repeat deploys once", async () => {
    const res = await post(acmeKey, world.anvil.chainId, { signerId: "hot", data: initCode }, "deploy-1");
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.id as string;
    const view = await world.settled(id);
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    const output = view.output as { verdict: string; nonce: number; contractAddress: string };
    expect(output.verdict).toBe("confirmed");
    // CREATE puts the contract at (sender, nonce): the reported address is that one, and holds the code.
    const expected = getContractAddress({ from: world.hot, nonce: BigInt(output.nonce) });
    expect(getAddress(output.contractAddress)).toBe(expected);
    expect(await world.anvil.public.getCode({ address: expected })).not.toBe("0x");
    expect(
      await world.anvil.public.readContract({
        address: expected,
        abi: TestToken.abi,
        functionName: "symbol",
      }),
    ).toBe("DPL");
    expect(view.progress).toMatchObject({
      milestone: 3,
      verdict: "confirmed",
      contractAddress: output.contractAddress,
    });
    const read = await request(api.app).get(`/v1/executions/${id}`).set("authorization", `Bearer ${acmeKey}`);
    expect(read.body.result).toMatchObject({ contractAddress: output.contractAddress });

    const replay = await post(acmeKey, world.anvil.chainId, { signerId: "hot", data: initCode }, "deploy-1");
    expect(replay.status).toBe(202);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body.id).toBe(id);
    // The deployment is the sender's last transaction: the replay sent nothing.
    expect(await world.anvil.public.getTransactionCount({ address: world.hot })).toBe(output.nonce + 1);
  });

  it("refuses a deployment without bytecode, over EIP-3860's init code limit, or as a UserOperation, naming the field", async () => {
    const refused = async (body: object) => {
      const res = await post(acmeKey, world.anvil.chainId, { signerId: "hot", ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.code).toBe("REQUEST_INVALID");
      return res.body.errors as { pointer: string; message: string }[];
    };
    expect(await refused({})).toEqual([
      expect.objectContaining({
        pointer: "body.data",
        message: expect.stringContaining("creation bytecode"),
      }),
    ]);
    expect(await refused({ data: "0x" })).toEqual([
      expect.objectContaining({
        pointer: "body.data",
        message: expect.stringContaining("creation bytecode"),
      }),
    ]);
    // The limit counts the attribution suffix the lifecycle appends: exactly the limit is one too many.
    const oversize = `0x${"00".repeat(MAX_INITCODE_BYTES)}`;
    expect(await refused({ data: oversize })).toEqual([
      expect.objectContaining({
        pointer: "body.data",
        message: expect.stringContaining(`${MAX_INITCODE_BYTES}-byte init code limit`),
      }),
    ]);
    expect(await refused({ data: initCode, account: recipient })).toEqual([
      expect.objectContaining({ pointer: "body.account", message: expect.stringContaining("`to`") }),
    ]);
  });
});

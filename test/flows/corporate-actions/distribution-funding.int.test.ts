import { type Address, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  batchId,
  distributorInitCode,
  distributorSalt,
} from "../../../flows/corporate-actions/distributor.js";
import { deploymentAddress } from "../../../flows/support/chain-writes.js";
import { Distributor } from "../../../src/chain/contracts/artifacts.js";
import { waitUntil } from "../../support/processes.js";
import {
  approvePayout,
  type CorporateWorld,
  deployTestToken,
  holderAddresses,
  mintMany,
  startCorporateWorld,
  startDistribution,
  tokenBalance,
  trackAsset,
} from "./support/corporate-world.js";

/**
 * A payer drained mid-distribution, after its batch write's funding check passed (docs/chains.md,
 * "Funding"): black-box, through the real runner role (killed once with SIGKILL), the api and a
 * real anvil behind the RPC fault proxy. The proxy holds batch 2's broadcast; while it is held the
 * runner is killed and the payer drained to 0 wei. The new runner's broadcast is refused for
 * insufficient funds and the write waits for funding (the action shows it), funding resumes it,
 * and every holder is paid exactly once.
 */
const HOLDERS = 30;
const BATCH_SIZE = 6;
const BATCHES = 5;
const DRAIN_BATCH = 2;
const ACTION_ID = "2026-q4-coupon-drained";
const DECLARED = "3000.000001";
const DECLARED_UNITS = 3_000_000_001n; // 6 decimals

let world: CorporateWorld;
let asset: Address;
let payment: Address;
let holders: Address[];
let balances: bigint[];
let recordDate: string;

beforeAll(async () => {
  world = await startCorporateWorld(import.meta.url, { rpcProxy: true });
  const { anvil } = world;
  const deployed = await deployTestToken(anvil, "NOTE", 18);
  asset = deployed.token;
  payment = (await deployTestToken(anvil, "USDC", 6)).token;
  holders = holderAddresses(HOLDERS);
  balances = holders.map((_, i) => BigInt(1 + ((i * 7919) % 997)) * 10n ** 15n + BigInt(i));
  await mintMany(anvil, asset, holders, balances);
  await mintMany(anvil, payment, [world.payer], [DECLARED_UNITS]);
  await trackAsset(world, asset, deployed.block);
  const last = await anvil.public.getBlock();
  recordDate = new Date(Number(last.timestamp) * 1000).toISOString();
  await anvil.test.setNextBlockTimestamp({ timestamp: last.timestamp + 10n });
  await anvil.mine(1);
  await world.ready;
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

function paymentBalance(holder: Address): Promise<bigint> {
  return tokenBalance(world.anvil, payment, holder);
}

async function startAndApprove(): Promise<string> {
  const id = await startDistribution(world, {
    actionId: ACTION_ID,
    kind: "coupon",
    chainId: world.anvil.chainId,
    asset,
    paymentToken: payment,
    amount: DECLARED,
    rounding: "floor",
    recordDate,
    payerSignerId: "payer",
    batchSize: BATCH_SIZE,
    quorum: 2,
    fundingTimeout: "1h",
  });
  const wait = await approvePayout(world, id);
  expect(wait.details.params).toMatchObject({ holders: HOLDERS, batches: BATCHES });
  return id;
}

describe("a corporate action whose payer runs dry after a batch's funding check", () => {
  it("waits for funding (shown on the action), survives a kill -9, and pays every holder once", async () => {
    const { anvil } = world;
    const proxy = world.rpcProxy;
    if (!proxy) throw new Error("the world has no rpc proxy");
    // Batch 2's signed bytes carry its batch id in their calldata: hold exactly that broadcast.
    const drainBatchId = batchId("acme", ACTION_ID, DRAIN_BATCH).slice(2).toLowerCase();
    const hold = proxy.on(
      "eth_sendRawTransaction",
      { hang: true },
      { when: (params) => String(params[0]).toLowerCase().includes(drainBatchId) },
    );
    const id = await startAndApprove();
    await waitUntil(`batch ${DRAIN_BATCH}'s broadcast held`, async () => hold.taken > 0, {
      timeoutMs: 180_000,
      intervalMs: 100,
    });

    // kill -9 while the broadcast is in flight; the payer runs dry while no runner lives.
    world.runner().kill("SIGKILL");
    expect((await world.runner().exited).signal).toBe("SIGKILL");
    await anvil.test.setBalance({ address: world.payer, value: 0n });
    hold.remove();
    await world.startRunner();

    // The write waits for funding, naming the payer and the amount; the action shows it.
    const paused = await world.waitFor(
      id,
      (e) => e.status === "waiting" && e.waitingFor?.[0]?.details?.funding !== undefined,
      "the action showing its write's funding wait",
      180_000,
    );
    const wait = paused.waitingFor[0];
    expect(wait).toMatchObject({ kind: "child", name: "chain.transaction" });
    expect(wait.details.funding).toMatchObject({
      address: world.payer,
      destination: { kind: "balance", address: world.payer },
      availableWei: "0",
    });
    const required = BigInt(wait.details.funding.requiredWei);
    expect(required).toBeGreaterThan(0n);
    expect(Date.parse(wait.details.funding.deadline)).toBeGreaterThan(Date.now());
    expect(wait.summary).toContain(`${world.payer} needs ${required} wei more`);
    expect(paused.progress).toMatchObject({ phase: "distribute", batch: DRAIN_BATCH });
    const child = await world.call("integrator", "GET", `/v1/executions/${wait.details.funding.executionId}`);
    expect(child.body.waitingFor[0]).toMatchObject({
      kind: "funding",
      details: { refusedStep: "broadcast:0", requiredWei: required.toString() },
    });

    await anvil.test.setBalance({ address: world.payer, value: 10n ** 20n });
    const done = await world.waitFor(
      id,
      (e) => e.status === "completed",
      "the distribution completed",
      240_000,
    );
    expect(done.result).toMatchObject({ holders: HOLDERS, batches: BATCHES, batchesSkipped: 0 });

    // Every holder holds exactly its pro-rata share: paid once, never twice.
    const sum = balances.reduce((a, b) => a + b, 0n);
    let paid = 0n;
    for (const [i, holder] of holders.entries()) {
      const balance = await paymentBalance(holder);
      expect(balance, holder).toBe((DECLARED_UNITS * (balances[i] as bigint)) / sum);
      paid += balance;
    }
    expect(await paymentBalance(world.payer)).toBe(DECLARED_UNITS - paid);
    // One BatchPaid per batch id.
    const distributor = deploymentAddress({
      initCode: distributorInitCode(world.payer),
      salt: distributorSalt("acme", world.payer),
    });
    const logs = parseEventLogs({
      abi: Distributor.abi,
      eventName: "BatchPaid",
      logs: await anvil.public.getLogs({ address: distributor, fromBlock: 0n }),
    });
    expect(logs.map((l) => l.args.batchId).sort()).toEqual(
      Array.from({ length: BATCHES }, (_, i) => batchId("acme", ACTION_ID, i)).sort(),
    );
    // One mined transaction per write, nonces contiguous: the payer's count equals its writes.
    const { rows } = await world.db.pool.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM executions WHERE parent_id = $1 GROUP BY status",
      [id],
    );
    expect(rows).toEqual([{ status: "completed", n: expect.any(Number) }]);
    expect(await anvil.public.getTransactionCount({ address: world.payer })).toBe(rows[0]?.n);
  }, 600_000);
});

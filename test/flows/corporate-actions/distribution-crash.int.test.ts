import { type Address, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  batchId,
  distributorInitCode,
  distributorSalt,
} from "../../../flows/corporate-actions/distributor.js";
import { deploymentAddress } from "../../../flows/support/chain-writes.js";
import { Distributor } from "../../../src/chain/contracts/artifacts.js";
import { ANVIL_KEYS } from "../../support/anvil.js";
import { waitUntil } from "../../support/processes.js";
import {
  approvePayout,
  type CorporateWorld,
  deployTestToken,
  holderAddresses,
  mintMany,
  payoutApprovalWait,
  startCorporateWorld,
  startDistribution,
  tokenBalance,
  trackAsset,
  transferFrom,
} from "./support/corporate-world.js";

/**
 * A dividend paid to every holder exactly once through a kill -9 of the runner mid-distribution
 * and a gas funding pause: the real api, runner and indexer roles, a real anvil.
 *
 * Short form here (120 holders, batches of 20); the long form runs 1,000 holders in batches of 100:
 * `npm run test:corporate-actions:long` (CORPORATE_ACTION_HOLDERS=1000).
 */
const HOLDERS = Number(process.env.CORPORATE_ACTION_HOLDERS ?? 120);
const BATCH_SIZE = HOLDERS >= 500 ? 100 : 20;
const BATCHES = Math.ceil(HOLDERS / BATCH_SIZE);
/** The runner is killed while this batch's transaction waits in the mempool. */
const KILL_BATCH = 2;
const ACTION_ID = "2026-q4-dividend";
const DECLARED = "12345.678901";
const DECLARED_UNITS = 12_345_678_901n; // 6 decimals

/** Holder that transfers after the record date (anvil key 5), and a treasury excluded by input. */
const mover = privateKeyToAccount(ANVIL_KEYS[5]).address.toLowerCase() as Address;
const treasury = privateKeyToAccount(ANVIL_KEYS[6]).address.toLowerCase() as Address;

let world: CorporateWorld;
let asset: Address;
let payment: Address;
let holders: Address[];
let balances: bigint[];
let recordDate: string;

beforeAll(async () => {
  world = await startCorporateWorld(import.meta.url);
  const { anvil } = world;
  const deployed = await deployTestToken(anvil, "BOND", 18);
  asset = deployed.token;
  payment = (await deployTestToken(anvil, "USDX", 6)).token;
  // Holders with uneven balances (so pro-rata shares leave a residue); the mover is one of them.
  holders = [...holderAddresses(HOLDERS - 1), mover];
  balances = holders.map((_, i) => BigInt(1 + ((i * 7919) % 997)) * 10n ** 15n + BigInt(i));
  await mintMany(anvil, asset, holders, balances);
  // The payer and the treasury hold the asset too, and are never entitled.
  await mintMany(anvil, asset, [world.payer.toLowerCase() as Address, treasury], [10n ** 21n, 10n ** 22n]);
  await mintMany(anvil, payment, [world.payer], [DECLARED_UNITS * 2n]);
  await trackAsset(world, asset, deployed.block);
  // Record date between the seeding and a transfer the snapshot must not see.
  const last = await anvil.public.getBlock();
  recordDate = new Date(Number(last.timestamp + 5n) * 1000).toISOString();
  await anvil.test.setNextBlockTimestamp({ timestamp: last.timestamp + 10n });
  await transferFrom(anvil, ANVIL_KEYS[5], asset, holders[0] as Address, balances[HOLDERS - 1] as bigint);
  await world.ready;
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

/** What each holder is owed: floor(declared × balance / Σ balances) at the record height. */
function expectedEntitlements(): { owed: Map<string, bigint>; residue: bigint } {
  const sum = balances.reduce((a, b) => a + b, 0n);
  const owed = new Map<string, bigint>();
  let paid = 0n;
  holders.forEach((h, i) => {
    const share = (DECLARED_UNITS * (balances[i] as bigint)) / sum;
    owed.set(h.toLowerCase(), share);
    paid += share;
  });
  return { owed, residue: DECLARED_UNITS - paid };
}

function paymentBalance(holder: Address): Promise<bigint> {
  return tokenBalance(world.anvil, payment, holder);
}

function start(): Promise<string> {
  return startDistribution(world, {
    actionId: ACTION_ID,
    kind: "dividend",
    chainId: world.anvil.chainId,
    asset,
    paymentToken: payment,
    amount: DECLARED,
    rounding: "floor",
    recordDate,
    payerSignerId: "payer",
    excluded: [treasury],
    batchSize: BATCH_SIZE,
    quorum: 2,
    fundingTimeout: "1h",
  });
}

/** Waits for the payout approval and has two distinct approvers vote for the hash they were shown. */
async function approve(id: string) {
  return (await approvePayout(world, id)).details.params;
}

/** The pending transactions in anvil's mempool (automine off). */
async function pendingInputs(): Promise<{ to: string; input: string }[]> {
  const pool = (await world.anvil.public.request({ method: "txpool_content" as never })) as {
    pending: Record<string, Record<string, { to: string; input: string }>>;
  };
  return Object.values(pool.pending).flatMap((byNonce) => Object.values(byNonce));
}

describe("a corporate action distribution", () => {
  it("pays every holder exactly once through a runner kill and a gas funding pause; Σ paid = declared − residue", async () => {
    const { anvil } = world;
    const { owed, residue } = expectedEntitlements();
    const id = await start();
    const params = await approvalParams(id);
    expect(params).toMatchObject({
      holders: HOLDERS,
      snapshotHolders: HOLDERS,
      declared: DECLARED,
      rounding: "floor",
      batches: BATCHES,
      payer: world.payer.toLowerCase(),
    });
    expect(units6(params.residue)).toBe(residue);
    expect(units6(params.entitled)).toBe(DECLARED_UNITS - residue);

    // From here blocks are mined by hand, so the kill lands while a batch waits in the mempool.
    await anvil.test.setAutomine(false);
    await approve(id);
    const distributor = deploymentAddress({
      initCode: distributorInitCode(world.payer),
      salt: distributorSalt("acme", world.payer),
    }).toLowerCase();
    const killBatchId = batchId("acme", ACTION_ID, KILL_BATCH).slice(2);
    await waitUntil(
      `batch ${KILL_BATCH} in the mempool`,
      async () => {
        const pending = await pendingInputs();
        if (pending.some((tx) => tx.to?.toLowerCase() === distributor && tx.input.includes(killBatchId)))
          return true;
        if (pending.length > 0) await anvil.mine(1);
        return false;
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const before = await world.call("integrator", "GET", `/v1/executions/${id}`);
    expect(before.body.progress).toMatchObject({
      phase: "distribute",
      batch: KILL_BATCH,
      batches: BATCHES,
      paid: KILL_BATCH * BATCH_SIZE,
    });

    // kill -9 mid-distribution; the batch is mined while no runner lives, then the payer runs dry.
    world.runner().kill("SIGKILL");
    expect((await world.runner().exited).signal).toBe("SIGKILL");
    await anvil.mine(1);
    await anvil.test.setBalance({ address: world.payer, value: 0n });
    await anvil.test.setAutomine(true);
    await world.startRunner();

    // The next batch's write waits for gas funding instead of failing.
    const funding = await waitUntil(
      "a batch write waiting for gas funding",
      async () => {
        const { rows } = await world.db.pool.query(
          `SELECT id, waiting_for FROM executions
           WHERE workflow = 'chain.transaction' AND parent_id = $1 AND status = 'waiting'`,
          [id],
        );
        return rows.find((r) => r.waiting_for?.some?.((w: { kind: string }) => w.kind === "funding"));
      },
      { timeoutMs: 120_000 },
    );
    expect(funding.waiting_for[0]).toMatchObject({
      kind: "funding",
      details: { destination: { kind: "balance", address: world.payer }, availableWei: "0" },
    });
    const paused = await world.call("integrator", "GET", `/v1/executions/${id}`);
    expect(paused.body.status).toBe("waiting");
    expect(paused.body.progress).toMatchObject({
      batch: KILL_BATCH + 1,
      paid: (KILL_BATCH + 1) * BATCH_SIZE,
    });

    await anvil.test.setBalance({ address: world.payer, value: 10n ** 20n });
    const done = await world.waitFor(
      id,
      (e) => e.status === "completed",
      "the distribution completed",
      240_000,
    );
    expect(done.result).toMatchObject({
      holders: HOLDERS,
      declared: DECLARED,
      batches: BATCHES,
      batchesSkipped: 0,
      distributor,
    });

    // Every holder paid exactly its entitlement (once: twice would show as double), nobody else.
    let paid = 0n;
    for (const holder of holders) {
      const balance = await paymentBalance(holder);
      expect(balance, holder).toBe(owed.get(holder.toLowerCase()));
      paid += balance;
    }
    expect(paid).toBe(DECLARED_UNITS - residue);
    expect(await paymentBalance(treasury)).toBe(0n);
    expect(await paymentBalance(world.payer)).toBe(DECLARED_UNITS * 2n - paid);
    // One BatchPaid per batch, each batch id once.
    const logs = parseEventLogs({
      abi: Distributor.abi,
      eventName: "BatchPaid",
      logs: await anvil.public.getLogs({ address: distributor as Address, fromBlock: 0n }),
    });
    expect(logs.map((l) => l.args.batchId).sort()).toEqual(
      Array.from({ length: BATCHES }, (_, i) => batchId("acme", ACTION_ID, i)).sort(),
    );
  }, 600_000);

  it("a second execution of the same action finds every batch paid and pays nothing again", async () => {
    const payerBefore = await paymentBalance(world.payer);
    const id = await start();
    await approve(id);
    const done = await world.waitFor(id, (e) => e.status === "completed", "the re-run completed", 120_000);
    expect(done.result).toMatchObject({ batches: BATCHES, batchesSkipped: BATCHES });
    expect(await paymentBalance(world.payer)).toBe(payerBefore);
  }, 300_000);
});

async function approvalParams(id: string) {
  return (await payoutApprovalWait(world, id)).wait.details.params as Record<string, string> & {
    residue: string;
    entitled: string;
  };
}

/** Base units of a decimal string of the 6-decimal payment token. */
function units6(text: string): bigint {
  const [whole, fraction = ""] = text.split(".");
  return BigInt(whole as string) * 10n ** 6n + BigInt(fraction.padEnd(6, "0") || "0");
}

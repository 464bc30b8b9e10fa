import { type Address, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { distributorInitCode, distributorSalt } from "../../../flows/corporate-actions/distributor.js";
import { CREATE2_DEPLOYER, deploymentAddress } from "../../../flows/support/chain-writes.js";
import { Distributor, TestToken } from "../../../src/chain/contracts/artifacts.js";
import { WaitAborted, waitUntil } from "../../support/processes.js";
import {
  type CorporateWorld,
  deployTestToken,
  holderAddresses,
  mintMany,
  payoutApprovalWait,
  startCorporateWorld,
  startDistribution,
  tokenBalance,
  trackAsset,
  votePayout,
} from "./support/corporate-world.js";

/**
 * The ways a distribution ends without paying: the payout rejected by an approver, its approval
 * expired, an asset the organisation's Ledger Index did not track at the record height, and a
 * payer short of the payment token; and a payer with no gas, which waits at the Distributor's
 * deployment instead of failing. The real api, runner and indexer roles on a real anvil; each test
 * reads the holders' payment-token balances on chain afterwards.
 */
const HOLDERS = 3;
const BATCH_SIZE = 2;
/** What the payer holds of the payment token (6 decimals): far below any declared amount here. */
const PAYER_UNITS = 1_000_000n;

let world: CorporateWorld;
let asset: Address;
/** An asset the organisation tracks only from a block after the record date. */
let lateAsset: Address;
let payment: Address;
/** The payment token of the distribution whose payer starts without gas (payer-2 holds 600). */
let payment2: Address;
let holders: Address[];
let recordDate: string;

beforeAll(async () => {
  world = await startCorporateWorld(import.meta.url);
  const { anvil } = world;
  const tracked = await deployTestToken(anvil, "BOND", 18);
  asset = tracked.token;
  lateAsset = (await deployTestToken(anvil, "LATE", 18)).token;
  payment = (await deployTestToken(anvil, "USDX", 6)).token;
  payment2 = (await deployTestToken(anvil, "USDY", 6)).token;
  holders = holderAddresses(HOLDERS);
  const balances = holders.map((_, i) => BigInt(i + 1) * 10n ** 18n);
  await mintMany(anvil, asset, holders, balances);
  await mintMany(anvil, lateAsset, holders, balances);
  await mintMany(anvil, payment, [world.payer], [PAYER_UNITS]);
  await mintMany(anvil, payment2, [world.payer2], [600_000_000n]);
  await trackAsset(world, asset, tracked.block);
  // The record date is the last seeded block's time; two later blocks settle it (finality depth 1).
  const last = await anvil.public.getBlock();
  recordDate = new Date(Number(last.timestamp) * 1000).toISOString();
  await anvil.test.setNextBlockTimestamp({ timestamp: last.timestamp + 1n });
  await anvil.mine(2);
  // The late asset is tracked, but only from a block after the record height.
  await world.db.pool.query(
    "INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height) VALUES ($1, 'acme', $2, 'erc20', $3)",
    [anvil.chainId, lateAsset, (last.number + 2n).toString()],
  );
  await world.ready;
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

function start(actionId: string, overrides: Record<string, unknown> = {}): Promise<string> {
  return startDistribution(world, {
    actionId,
    kind: "coupon",
    chainId: world.anvil.chainId,
    asset,
    paymentToken: payment,
    amount: "600",
    rounding: "floor",
    recordDate,
    payerSignerId: "payer",
    batchSize: BATCH_SIZE,
    quorum: 2,
    fundingTimeout: "1h",
    ...overrides,
  });
}

const approvalWait = (id: string) => payoutApprovalWait(world, id);

async function failed(id: string) {
  return world.waitFor(id, (e) => e.status === "failed", "the execution failed");
}

const vote = (
  id: string,
  person: "approver" | "approver2",
  decision: "approve" | "reject",
  paramsHash: string,
  reason?: string,
) => votePayout(world, id, person, decision, paramsHash, reason);

function paymentBalance(holder: Address, token: Address = payment): Promise<bigint> {
  return tokenBalance(world.anvil, token, holder);
}

/** No holder holds any of the payment token, and the payer still holds all it had. */
async function expectNobodyPaid() {
  for (const holder of holders) expect(await paymentBalance(holder), holder).toBe(0n);
  expect(await paymentBalance(world.payer)).toBe(PAYER_UNITS);
}

/** The chain.transaction children the execution started (its writes). */
async function writesOf(id: string): Promise<number> {
  const { rows } = await world.db.pool.query(
    "SELECT count(*)::int AS n FROM executions WHERE parent_id = $1 AND workflow = 'chain.transaction'",
    [id],
  );
  return rows[0].n as number;
}

describe("a corporate action distribution that does not pay", () => {
  it("fails CORPORATE_ACTION_APPROVAL_REJECTED when an approver rejects the payout, naming who and why", async () => {
    const id = await start("reject-1");
    const { execution, wait } = await approvalWait(id);
    expect(execution.progress).toMatchObject({ phase: "approval", holders: HOLDERS, batches: 2 });
    await vote(id, "approver", "approve", wait.details.paramsHash);
    const decided = await vote(id, "approver2", "reject", wait.details.paramsHash, "record date is wrong");
    expect(decided.outcome).toBe("rejected");

    const done = await failed(id);
    expect(done.failure).toMatchObject({
      code: "CORPORATE_ACTION_APPROVAL_REJECTED",
      retryable: false,
      details: { actionId: "reject-1", reason: "record date is wrong" },
    });
    expect(done.failure.message).toContain("approver2 rejected the payout of reject-1");
    expect(done.progress).toMatchObject({ phase: "approval" });
    expect(await writesOf(id)).toBe(0);
    await expectNobodyPaid();
  }, 120_000);

  it("fails CORPORATE_ACTION_APPROVAL_EXPIRED when nobody decides within approvalTimeout", async () => {
    const id = await start("expire-1", { approvalTimeout: "2s" });
    const { wait } = await approvalWait(id);
    expect(wait.until).not.toBeNull();
    // One vote of the two the quorum needs: not a decision, so the approval still expires.
    await vote(id, "approver", "approve", wait.details.paramsHash);

    const done = await failed(id);
    expect(done.failure).toMatchObject({
      code: "CORPORATE_ACTION_APPROVAL_EXPIRED",
      retryable: false,
      details: { actionId: "expire-1" },
    });
    expect(done.failure.message).toBe("no payout approval for expire-1 in 2s");
    expect(done.progress).toMatchObject({ phase: "approval" });
    // A vote after expiry decides nothing.
    const late = await world.call("approver2", "POST", `/v1/executions/${id}/approvals/payout`, {
      decision: "approve",
      paramsHash: wait.details.paramsHash,
    });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("APPROVAL_NOT_PENDING");
    expect(await writesOf(id)).toBe(0);
    await expectNobodyPaid();
  }, 120_000);

  it("fails CORPORATE_ACTION_TOKEN_NOT_TRACKED for an asset tracked only after the record height, asking nobody", async () => {
    const id = await start("late-1", { asset: lateAsset });
    const done = await failed(id);
    expect(done.failure).toMatchObject({
      code: "CORPORATE_ACTION_TOKEN_NOT_TRACKED",
      retryable: false,
      details: { field: "asset", value: lateAsset },
    });
    expect(done.failure.message).toMatch(
      new RegExp(`^asset ${lateAsset} is not tracked by this organisation at block \\d+$`),
    );
    expect(done.progress).toMatchObject({ phase: "record" });
    const approvals = await world.call("integrator", "GET", `/v1/executions/${id}/approvals`);
    expect(approvals.body).toMatchObject({ pending: [], votes: [] });
    expect(await writesOf(id)).toBe(0);
    await expectNobodyPaid();
  }, 120_000);

  it("fails CORPORATE_ACTION_PAYER_SHORT before the first batch when the payer holds too little", async () => {
    const id = await start("short-1");
    const { wait } = await approvalWait(id);
    await vote(id, "approver", "approve", wait.details.paramsHash);
    await vote(id, "approver2", "approve", wait.details.paramsHash);

    const done = await failed(id);
    expect(done.failure).toMatchObject({
      code: "CORPORATE_ACTION_PAYER_SHORT",
      retryable: false,
      details: {
        batch: 0,
        payer: world.payer.toLowerCase(),
        availableUnits: PAYER_UNITS.toString(),
      },
    });
    expect(BigInt(done.failure.details.requiredUnits)).toBeGreaterThan(PAYER_UNITS);
    expect(done.failure.message).toContain(
      `payer ${world.payer.toLowerCase()} holds ${PAYER_UNITS} base units of USDX`,
    );
    // The operator sees the distribution under way with no batch settled, not a pending approval.
    expect(done.progress).toMatchObject({
      phase: "distribute",
      batch: 0,
      batches: 2,
      paid: 0,
      holders: HOLDERS,
    });
    await expectNobodyPaid();
    // The Distributor exists and may spend the payer's tokens: the balance, not the allowance, was short.
    const distributor = deploymentAddress({
      initCode: distributorInitCode(world.payer),
      salt: distributorSalt("acme", world.payer),
    });
    const allowance = await world.anvil.public.readContract({
      address: payment,
      abi: TestToken.abi,
      functionName: "allowance",
      args: [world.payer, distributor],
    });
    expect(allowance).toBe(2n ** 256n - 1n);
    const paid = parseEventLogs({
      abi: Distributor.abi,
      eventName: "BatchPaid",
      logs: await world.anvil.public.getLogs({ address: distributor, fromBlock: 0n }),
    });
    expect(paid).toEqual([]);
  }, 120_000);
});

describe("a corporate action distribution whose payer has no gas", () => {
  it("waits for gas funding at the Distributor's deployment instead of failing, and pays once funded", async () => {
    const { anvil } = world;
    await anvil.test.setBalance({ address: world.payer2, value: 0n });
    const id = await start("gas-1", { payerSignerId: "payer-2", paymentToken: payment2 });
    const { wait } = await approvalWait(id);
    await vote(id, "approver", "approve", wait.details.paramsHash);
    await vote(id, "approver2", "approve", wait.details.paramsHash);

    const funding = await waitUntil(
      "the Distributor's deployment waiting for gas funding",
      async () => {
        const parent = await world.db.pool.query("SELECT status, failure FROM executions WHERE id = $1", [
          id,
        ]);
        if (parent.rows[0]?.status === "failed")
          throw new WaitAborted(JSON.stringify(parent.rows[0].failure));
        const { rows } = await world.db.pool.query(
          `SELECT input, waiting_for FROM executions
           WHERE workflow = 'chain.transaction' AND parent_id = $1 AND status = 'waiting'`,
          [id],
        );
        return rows.find((r) => r.waiting_for?.some?.((w: { kind: string }) => w.kind === "funding"));
      },
      { timeoutMs: 60_000 },
    );
    expect(funding.input.to.toLowerCase()).toBe(CREATE2_DEPLOYER.toLowerCase());
    expect(funding.waiting_for[0]).toMatchObject({
      kind: "funding",
      details: { destination: { kind: "balance", address: world.payer2 }, availableWei: "0" },
    });
    const paused = await world.call("integrator", "GET", `/v1/executions/${id}`);
    expect(paused.body.status).toBe("waiting");
    expect(paused.body.progress).toMatchObject({ phase: "distribute", batch: 0, paid: 0 });

    await anvil.test.setBalance({ address: world.payer2, value: 10n ** 20n });
    const done = await world.waitFor(id, (e) => e.status === "completed", "the distribution completed");
    const distributor = deploymentAddress({
      initCode: distributorInitCode(world.payer2),
      salt: distributorSalt("acme", world.payer2),
    }).toLowerCase();
    expect(done.result).toMatchObject({ distributor, holders: HOLDERS, distributed: "600", batches: 2 });
    // Balances 1 : 2 : 3 of 600.
    expect(await Promise.all(holders.map((h) => paymentBalance(h, payment2)))).toEqual([
      100_000_000n,
      200_000_000n,
      300_000_000n,
    ]);
  }, 120_000);
});

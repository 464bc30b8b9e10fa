import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainReader } from "../../src/ledger-index/chain-reader.js";
import { tailStep } from "../../src/ledger-index/live-tail.js";
import type { ShardFence } from "../../src/ownership/store/shard-fence.js";
import type { Anvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { killAllProcesses } from "../support/processes.js";
import { type IndexedToken, startIndexedToken } from "./support/indexed-token.js";
import {
  balancesFromNode,
  deployerWallet,
  dumpIndex,
  HOLDERS,
  type LedgerDriver,
  ledgerDriver,
  mintSome,
  takeChainShard,
} from "./support/ledger-world.js";

/**
 * Reorganisations (docs/ledger-index.md, "Live tail"): a real anvil reorganises the chain under an
 * index that has already ingested the old branch; after the rollback and replay the index equals,
 * row for row, an index built from scratch on the final chain in a database of its own.
 */

/** Finality depth 12: every reorganisation below stays inside the blocks the tail ingests itself. */
const SETTINGS = { batchBlocks: 7, rangeBlocks: 20, depth: 12 };
let world: IndexedToken;
let anvil: Anvil;
let db: TestDatabase;
let fence: ShardFence;
let token: `0x${string}`;
let driver: LedgerDriver;

beforeAll(async () => {
  world = await startIndexedToken({ settings: SETTINGS, mints: 30, shardOwner: "tail-a", caughtUp: true });
  ({ anvil, db, token, driver, fence } = world);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.stop();
});

/** Builds a fresh index of the node's current chain in a new database and returns its rows. */
async function indexFromScratch() {
  const fresh = await createTestDatabase();
  try {
    const again = ledgerDriver(fresh.pool, anvil, SETTINGS);
    const deployedAt = (await driver.scope.rowsFor(anvil.chainId, "acme", token))[0]?.addedHeight ?? 0n;
    await again.scope.add({
      chainId: anvil.chainId,
      orgId: "acme",
      address: token,
      kind: "erc20",
      fromHeight: deployedAt,
    });
    await again.catchUp(await takeChainShard(fresh.pool, anvil.chainId, "scratch"));
    return await dumpIndex(fresh.pool, anvil.chainId);
  } finally {
    await fresh.drop();
  }
}

async function lastReorgDepth(): Promise<number> {
  const { rows } = await db.pool.query("SELECT last_reorg_depth FROM ledger_chains WHERE chain_id = $1", [
    anvil.chainId,
  ]);
  return rows[0].last_reorg_depth;
}

describe("the live tail under reorganisations", () => {
  it("first indexes the chain as the node reports it (catch-up ranges and tail together)", async () => {
    const node = await balancesFromNode(anvil, token);
    const index = await dumpIndex(db.pool, anvil.chainId);
    expect(index.transfers).toHaveLength(node.logs);
    expect(Object.fromEntries(index.balances.map((b) => [b.holder, b.balance]))).toEqual(
      Object.fromEntries([...node.balances].map(([h, v]) => [h, v.toString()])),
    );
  });

  it("rolls back an anvil_reorg to the common ancestor and replays the new branch", async () => {
    const before = await dumpIndex(db.pool, anvil.chainId);
    const from = deployerWallet(anvil).account?.address as string;
    const mint = (to: string, amount: bigint) => ({
      from,
      to: token,
      // mint(address,uint256)
      data: `0x40c10f19${to.slice(2).padStart(64, "0")}${amount.toString(16).padStart(64, "0")}`,
    });
    // Replace the last 4 blocks with a branch holding two different mints.
    await anvil.test.request({
      method: "anvil_reorg" as never,
      params: [
        4,
        [
          [mint(HOLDERS[0] as string, 777n), 0],
          [mint(HOLDERS[1] as string, 888n), 2],
        ],
      ] as never,
    });
    await driver.catchUp(fence);
    expect(await lastReorgDepth()).toBeGreaterThanOrEqual(4);
    const after = await dumpIndex(db.pool, anvil.chainId);
    expect(after).not.toEqual(before);
    expect(after).toEqual(await indexFromScratch());
  });

  it("rolls back a chain that evm_revert shortened and that then grew other blocks", async () => {
    const snapshot = await anvil.test.snapshot();
    await mintSome(anvil, token, 5, 1);
    await driver.catchUp(fence);
    const branchA = await dumpIndex(db.pool, anvil.chainId);
    await anvil.test.revert({ id: snapshot });
    await mintSome(anvil, token, 7, 2);
    await driver.catchUp(fence);
    expect(await lastReorgDepth()).toBeGreaterThanOrEqual(5);
    const final = await dumpIndex(db.pool, anvil.chainId);
    expect(final).not.toEqual(branchA);
    expect(final).toEqual(await indexFromScratch());
  });
});

describe("the stored blocks", () => {
  it("keep about the finality window: settled blocks are pruned with each batch", async () => {
    await anvil.mine(60);
    await driver.catchUp(fence);
    const { rows } = await db.pool.query(
      "SELECT min(height)::int AS low, max(height)::int AS high FROM ledger_blocks WHERE chain_id = $1",
      [anvil.chainId],
    );
    expect(rows[0].high).toBe(Number(await anvil.public.getBlockNumber()));
    expect(rows[0].high - rows[0].low).toBeLessThan(SETTINGS.depth + SETTINGS.batchBlocks);
  });
});

describe("the live tail's anchor", () => {
  it('is the node\'s finalized block under finality "finalized", and head + 1 - depth under a depth', async () => {
    await anvil.mine(80);
    const head = await anvil.public.getBlockNumber();
    const finalized = (await anvil.public.getBlock({ blockTag: "finalized" })).number;
    expect(finalized).toBeLessThan(head);
    const fresh = await createTestDatabase();
    try {
      const fence = await takeChainShard(fresh.pool, anvil.chainId, "anchor");
      const byTag = ledgerDriver(fresh.pool, anvil, SETTINGS).tail;
      await tailStep({ ...byTag, reader: new ChainReader(byTag.reader.client, "finalized") }, fence);
      expect(await byTag.index.cursor(anvil.chainId)).toMatchObject({ height: finalized });
      await fresh.pool.query("DELETE FROM ledger_chains; DELETE FROM ledger_blocks");
      await tailStep(byTag, fence);
      expect(await byTag.index.cursor(anvil.chainId)).toMatchObject({ height: head + 1n - 12n });
    } finally {
      await fresh.drop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerReads } from "../../src/ledger-index/store/reads.js";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { killAllProcesses } from "../support/processes.js";
import {
  balancesFromNode,
  deployerWallet,
  deployToken,
  dumpIndex,
  HOLDERS,
  ledgerDriver,
  mintSome,
  takeChainShard,
} from "./support/ledger-world.js";

/**
 * Removals (docs/ledger-index.md, "Scope"): a contract removed from the scope at height h keeps
 * its rows up to h, and no replay — here a reorganisation reaching below h whose new branch has
 * Transfer logs above h — brings a later row back.
 */

const SETTINGS = { batchBlocks: 5, rangeBlocks: 8, depth: 20 };
let anvil: Anvil;
let db: TestDatabase;
let token: `0x${string}`;
let deployedAt: bigint;

beforeAll(async () => {
  [anvil, db] = await Promise.all([startAnvil(), createTestDatabase()]);
  ({ token, block: deployedAt } = await deployToken(anvil));
});

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

const acme = () => ({ chainId: anvil.chainId, orgId: "acme", address: token, kind: "erc20" as const });

async function heights(pool = db.pool): Promise<bigint[]> {
  const { rows } = await pool.query("SELECT block_number::text AS b FROM ledger_erc20_transfers ORDER BY 1");
  return rows.map((r) => BigInt(r.b));
}

describe("a contract removed from the scope", () => {
  it("keeps its rows up to the removal height, and a replay from below it brings none back", async () => {
    const driver = ledgerDriver(db.pool, anvil, SETTINGS);
    await driver.scope.add({ ...acme(), fromHeight: deployedAt });
    await mintSome(anvil, token, 10);
    const fence = await takeChainShard(db.pool, anvil.chainId, "tail");
    await driver.catchUp(fence);
    const h = await anvil.public.getBlockNumber();
    const removed = await driver.scope.remove(acme(), h);
    expect(removed.removedHeight).toBe(h);
    await mintSome(anvil, token, 6, 1);
    await driver.catchUp(fence);
    expect((await heights()).every((b) => b <= h)).toBe(true);
    expect(await heights()).toHaveLength((await balancesFromNode(anvil, token, h)).logs);

    // A reorganisation 9 blocks deep (3 below h) whose branch mints below and above h.
    const from = deployerWallet(anvil).account?.address as string;
    const mint = (amount: bigint) => ({
      from,
      to: token,
      data: `0x40c10f19${(HOLDERS[2] as string).slice(2).padStart(64, "0")}${amount.toString(16).padStart(64, "0")}`,
    });
    await anvil.test.request({
      method: "anvil_reorg" as never,
      params: [
        9,
        [
          [mint(5n), 0],
          [mint(6n), 1],
          [mint(7n), 6],
          [mint(8n), 8],
        ],
      ] as never,
    });
    await driver.catchUp(fence);
    const after = await heights();
    expect(after.every((b) => b <= h)).toBe(true);
    const node = await balancesFromNode(anvil, token, h);
    expect(after).toHaveLength(node.logs);
    // The organisation's read stops at h: what the node held at h, holder by holder.
    const reads = new PgLedgerReads(db.pool);
    for (const holder of HOLDERS) {
      const read = await reads.erc20Balance(anvil.chainId, token, holder, h);
      expect(read.balance).toBe((node.balances.get(holder.toLowerCase()) ?? 0n).toString());
    }

    // And a fresh index of the final chain, told of the removal before it starts, is the same.
    const fresh = await createTestDatabase();
    try {
      const again = ledgerDriver(fresh.pool, anvil, SETTINGS);
      await again.scope.add({ ...acme(), fromHeight: deployedAt });
      await again.scope.remove(acme(), h);
      await again.catchUp(await takeChainShard(fresh.pool, anvil.chainId, "scratch"));
      expect(await dumpIndex(db.pool, anvil.chainId)).toEqual(await dumpIndex(fresh.pool, anvil.chainId));
    } finally {
      await fresh.drop();
    }
  });

  it("replaces a contract in one transaction and refuses unknown kinds and removals of untracked contracts", async () => {
    const driver = ledgerDriver(db.pool, anvil, SETTINGS);
    const next = await deployToken(anvil, "T2");
    await driver.scope.add({ ...acme(), fromHeight: deployedAt });
    const swap = await driver.scope.replace(acme(), next.block - 1n, {
      ...acme(),
      address: next.token,
      fromHeight: next.block,
    });
    expect(swap.removed.removedHeight).toBe(next.block - 1n);
    expect(swap.added.address).toBe(next.token);
    await expect(
      driver.scope.add({ ...acme(), kind: "erc721" as never, fromHeight: 0n }),
    ).rejects.toMatchObject({
      code: "LEDGER_SCOPE_INVALID",
    });
    await expect(driver.scope.remove({ ...acme(), orgId: "other" }, 1n)).rejects.toMatchObject({
      code: "LEDGER_SCOPE_NOT_FOUND",
    });
    // A replacement whose removal fails adds nothing either.
    await expect(
      driver.scope.replace({ ...acme(), orgId: "other" }, 1n, { ...acme(), orgId: "other", fromHeight: 0n }),
    ).rejects.toMatchObject({ code: "LEDGER_SCOPE_NOT_FOUND" });
    expect(await driver.scope.rowsFor(anvil.chainId, "other", token)).toEqual([]);
  });
});

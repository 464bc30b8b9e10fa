import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerDomainReads } from "../../src/ledger-index/store/domain-reads.js";
import type { ShardFence } from "../../src/ownership/store/shard-fence.js";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { killAllProcesses } from "../support/processes.js";
import {
  type DomainContracts,
  deployDomain,
  domainActivity,
  dumpDomain,
  fixtureCall,
  OPERATOR,
  send,
  settingKey,
} from "./support/domain-contracts.js";
import { ledgerDriver, takeChainShard } from "./support/ledger-world.js";

/**
 * The price-feed, price-resolver and system-settings rows under reorganisations
 * (docs/ledger-index.md, "Read model"): after the rollback and replay the rows equal, row for
 * row, an index built from scratch on the final chain, and the latest values read from them are
 * the final chain's (a rolled-back observation restores the one before it).
 */

const SETTINGS = { batchBlocks: 6, rangeBlocks: 10, depth: 12 };
const ASSET = "0x00000000000000000000000000000000000a55e7" as Address;
let anvil: Anvil;
let db: TestDatabase;
let fence: ShardFence;
let c: DomainContracts;
let driver: ReturnType<typeof ledgerDriver>;
let reads: PgLedgerDomainReads;

/** The organisation's scope for `c`, added to `scope`. */
async function track(scope: ReturnType<typeof ledgerDriver>["scope"]) {
  const base = { chainId: anvil.chainId, orgId: "acme" };
  await scope.add({ ...base, address: c.feed.address, kind: "price-feed", fromHeight: c.feed.block });
  await scope.add({
    ...base,
    address: c.resolver.address,
    kind: "price-resolver",
    fromHeight: c.resolver.block,
  });
  await scope.add({
    ...base,
    address: c.settings.address,
    kind: "system-settings",
    fromHeight: c.settings.block,
  });
}

beforeAll(async () => {
  [anvil, db] = await Promise.all([startAnvil(), createTestDatabase()]);
  c = await deployDomain(anvil, ASSET);
  // History below the tail's anchor: caught up through ranges.
  await domainActivity(anvil, c, 18);
  driver = ledgerDriver(db.pool, anvil, SETTINGS);
  reads = new PgLedgerDomainReads(db.pool);
  await track(driver.scope);
  fence = await takeChainShard(db.pool, anvil.chainId, "tail-a");
  await driver.catchUp(fence);
});

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

async function indexFromScratch() {
  const fresh = await createTestDatabase();
  try {
    const again = ledgerDriver(fresh.pool, anvil, SETTINGS);
    await track(again.scope);
    await again.catchUp(await takeChainShard(fresh.pool, anvil.chainId, "scratch"));
    return await dumpDomain(fresh.pool, anvil.chainId);
  } finally {
    await fresh.drop();
  }
}

describe("price, asset-status and settings rows", () => {
  it("index the chain's FeedCreated, ObservationSubmitted, StalenessBoundSet and SettingChanged logs", async () => {
    const rows = await dumpDomain(db.pool, anvil.chainId);
    expect(rows.feeds).toEqual([
      expect.objectContaining({
        feed: c.feed.address,
        asset: ASSET,
        owner: OPERATOR.toLowerCase(),
        decimals: 8,
      }),
    ]);
    expect(rows.observations).toHaveLength(6);
    expect(rows.bounds).toHaveLength(6);
    expect(rows.settings).toHaveLength(6);
    const feed = await reads.priceFeed(anvil.chainId, c.feed.address, null);
    // The 16th call (i = 15) was the last observation: n = 16.
    expect(feed?.latest).toMatchObject({ roundId: "6", answer: "1600", updatedAt: "1700000016" });
    const status = await reads.assetStatus(anvil.chainId, "acme", ASSET);
    expect(status).toMatchObject({
      status: "active",
      resolver: c.resolver.address,
      feed: c.feed.address,
      maxAgeSeconds: String(60 + 18),
      activeSinceBlock: rows.bounds[0]?.block_number.toString(),
    });
    expect(await reads.assetStatus(anvil.chainId, "globex", ASSET)).toBeNull();
    const settings = await reads.settings(anvil.chainId, c.settings.address, null);
    expect(settings.map((s) => [s.key, BigInt(s.value)])).toEqual([
      [settingKey("k0"), 17n],
      [settingKey("k1"), 14n],
    ]);
  });

  it("roll back an anvil_reorg (the previous latest values return) and equal a from-scratch index", async () => {
    const before = await reads.priceFeed(anvil.chainId, c.feed.address, null);
    await send(anvil, c.feed.address, fixtureCall({ fn: "submit", answer: -5n, updatedAt: 1n }));
    await driver.catchUp(fence);
    expect((await reads.priceFeed(anvil.chainId, c.feed.address, null))?.latest?.answer).toBe("-5");

    // Replace the last 3 blocks (the -5 observation among them) with a branch holding only settings.
    const tx = (to: Address, data: `0x${string}`) => ({ from: OPERATOR, to, data });
    await anvil.test.request({
      method: "anvil_reorg" as never,
      params: [
        3,
        [
          [tx(c.settings.address, fixtureCall({ fn: "set", key: "k9", value: 99n })), 0],
          [tx(c.settings.address, fixtureCall({ fn: "set", key: "k0", value: 42n })), 1],
        ],
      ] as never,
    });
    await driver.catchUp(fence);
    expect((await reads.priceFeed(anvil.chainId, c.feed.address, null))?.latest).toEqual(before?.latest);
    const settings = await reads.settings(anvil.chainId, c.settings.address, null);
    expect(settings.find((s) => s.key === settingKey("k0"))?.value).toBe(
      `0x${(42).toString(16).padStart(64, "0")}`,
    );
    expect(await dumpDomain(db.pool, anvil.chainId)).toEqual(await indexFromScratch());
  });

  it("roll back a chain that evm_revert shortened and that then grew other blocks", async () => {
    const snapshot = await anvil.test.snapshot();
    await domainActivity(anvil, c, 6, 1);
    await driver.catchUp(fence);
    const branchA = await dumpDomain(db.pool, anvil.chainId);
    await anvil.test.revert({ id: snapshot });
    await domainActivity(anvil, c, 8, 2);
    await driver.catchUp(fence);
    const final = await dumpDomain(db.pool, anvil.chainId);
    expect(final).not.toEqual(branchA);
    expect(final).toEqual(await indexFromScratch());
    expect((await reads.priceFeed(anvil.chainId, c.feed.address, null))?.latest?.answer).toBe(
      String(100 * 2007),
    );
  });
});

import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerDomainReads } from "../../src/ledger-index/store/domain-reads.js";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { killAllProcesses } from "../support/processes.js";
import {
  type DomainContracts,
  deployDomain,
  deployFeed,
  deployResolver,
  domainActivity,
  dumpDomain,
  fixtureCall,
  OPERATOR,
  send,
} from "./support/domain-contracts.js";
import { ledgerDriver, takeChainShard } from "./support/ledger-world.js";

/**
 * Removals of price feeds, resolvers and settings contracts (docs/ledger-index.md, "Scope"): a
 * contract removed at height h keeps its rows up to h; a reorganisation reaching below h whose
 * branch emits above h brings none back; reads of a removed feed stop at h, and an asset's status
 * follows only the organisation's live resolvers.
 */

const SETTINGS = { batchBlocks: 5, rangeBlocks: 8, depth: 20 };
const ASSET = "0x00000000000000000000000000000000000b0b0b" as Address;
let anvil: Anvil;
let db: TestDatabase;
let c: DomainContracts;

beforeAll(async () => {
  [anvil, db] = await Promise.all([startAnvil(), createTestDatabase()]);
  c = await deployDomain(anvil, ASSET);
});

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

const entry = (address: Address, kind: "price-feed" | "price-resolver" | "system-settings") => ({
  chainId: anvil.chainId,
  orgId: "acme",
  address,
  kind,
});

function scopeOf(driver: ReturnType<typeof ledgerDriver>) {
  return Promise.all([
    driver.scope.add({ ...entry(c.feed.address, "price-feed"), fromHeight: c.feed.block }),
    driver.scope.add({ ...entry(c.resolver.address, "price-resolver"), fromHeight: c.resolver.block }),
    driver.scope.add({ ...entry(c.settings.address, "system-settings"), fromHeight: c.settings.block }),
  ]);
}

const above = (rows: { block_number: string | number }[], h: bigint) =>
  rows.filter((r) => BigInt(r.block_number) > h);

describe("price and settings contracts removed from the scope", () => {
  it("keep their rows up to the removal height, and a replay from below it brings none back", async () => {
    const driver = ledgerDriver(db.pool, anvil, SETTINGS);
    await scopeOf(driver);
    await domainActivity(anvil, c, 9);
    const fence = await takeChainShard(db.pool, anvil.chainId, "tail");
    await driver.catchUp(fence);
    const h = await anvil.public.getBlockNumber();
    await driver.scope.remove(entry(c.feed.address, "price-feed"), h);
    await driver.scope.remove(entry(c.settings.address, "system-settings"), h);
    const atRemoval = await dumpDomain(db.pool, anvil.chainId);
    await domainActivity(anvil, c, 6, 1);
    await driver.catchUp(fence);
    const later = await dumpDomain(db.pool, anvil.chainId);
    expect(above(later.observations, h)).toEqual([]);
    expect(above(later.settings, h)).toEqual([]);
    // The resolver stays tracked: its later bounds are indexed.
    expect(above(later.bounds, h)).toHaveLength(2);

    // A reorganisation 8 blocks deep (2 below h) whose branch emits below and above h.
    const tx = (to: Address, data: `0x${string}`) => ({ from: OPERATOR, to, data });
    const submit = (answer: bigint) =>
      tx(c.feed.address, fixtureCall({ fn: "submit", answer, updatedAt: answer }));
    const set = (value: bigint) => tx(c.settings.address, fixtureCall({ fn: "set", key: "k7", value }));
    await anvil.test.request({
      method: "anvil_reorg" as never,
      params: [
        8,
        [
          [submit(5n), 0],
          [set(6n), 1],
          [submit(7n), 5],
          [set(8n), 7],
        ],
      ] as never,
    });
    await driver.catchUp(fence);
    const after = await dumpDomain(db.pool, anvil.chainId);
    expect(above(after.observations, h)).toEqual([]);
    expect(above(after.settings, h)).toEqual([]);
    expect(after.observations.at(-1)).toMatchObject({ answer: 5 });
    expect(after.observations).not.toEqual(atRemoval.observations);

    // Reads of the removed feed stop at h, even when another organisation tracks it on.
    const reads = new PgLedgerDomainReads(db.pool);
    expect((await reads.priceFeed(anvil.chainId, c.feed.address, h))?.latest?.answer).toBe("5");
    expect(await reads.settings(anvil.chainId, c.settings.address, h)).toContainEqual(
      expect.objectContaining({ value: `0x${"6".padStart(64, "0")}` }),
    );

    // A fresh index of the final chain, told of the removals before it starts, is the same.
    const fresh = await createTestDatabase();
    try {
      const again = ledgerDriver(fresh.pool, anvil, SETTINGS);
      await scopeOf(again);
      await again.scope.remove(entry(c.feed.address, "price-feed"), h);
      await again.scope.remove(entry(c.settings.address, "system-settings"), h);
      await again.catchUp(await takeChainShard(fresh.pool, anvil.chainId, "scratch"));
      expect(await dumpDomain(db.pool, anvil.chainId)).toEqual(await dumpDomain(fresh.pool, anvil.chainId));
    } finally {
      await fresh.drop();
    }
  });

  it("an asset's status follows the organisation's live resolvers only", async () => {
    const driver = ledgerDriver(db.pool, anvil, SETTINGS);
    const fence = await takeChainShard(db.pool, anvil.chainId, "tail-2");
    const reads = new PgLedgerDomainReads(db.pool);
    const other = "0x00000000000000000000000000000000000c0c0c" as Address;
    const feed = await deployFeed(anvil, other);
    await driver.scope.add({ ...entry(feed.address, "price-feed"), fromHeight: feed.block });
    const next = await deployResolver(anvil);
    await driver.catchUp(fence);
    // Known through a live feed, no bound yet: paused.
    expect(await reads.assetStatus(anvil.chainId, "acme", other)).toMatchObject({
      status: "paused",
      resolver: null,
    });

    const bound = await send(
      anvil,
      next.address,
      fixtureCall({ fn: "setBound", asset: other, feed: feed.address, maxAge: 300n }),
    );
    const swapAt = await anvil.public.getBlockNumber();
    await driver.scope.replace(entry(c.resolver.address, "price-resolver"), swapAt, {
      ...entry(next.address, "price-resolver"),
      fromHeight: next.block,
    });
    await driver.catchUp(fence);
    expect(await reads.assetStatus(anvil.chainId, "acme", other)).toMatchObject({
      status: "active",
      resolver: next.address,
      maxAgeSeconds: "300",
      activeSinceBlock: bound.toString(),
    });
    // ASSET's bounds came from the removed resolver: the organisation no longer sees it active.
    expect(await reads.assetStatus(anvil.chainId, "acme", ASSET)).toBeNull();
  });
});

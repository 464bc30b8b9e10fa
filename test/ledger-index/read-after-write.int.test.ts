import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerIndexer } from "../../src/ledger-index/ledger-indexer.js";
import { bindIndexedHeights } from "../../src/ledger-index/wait-for-indexed.js";
import { PgLedgerReads } from "../../src/store/pg-ledger-reads.js";
import { type ChainWorld, startChainWorld } from "../chain/support/chain-world.js";
import { killAllProcesses } from "../support/processes.js";
import { logger, SHARD_COUNT, takeChainShard } from "./support/ledger-world.js";

/**
 * Read-after-write (docs/ledger-index.md): a write that asks for it reaches milestone 4
 * ("indexed") only once the Ledger Index has ingested its block, through a durable polled wait.
 */

let world: ChainWorld;
let unbind: () => void;

beforeAll(async () => {
  world = await startChainWorld({ file: "ledger-read-after-write", chain: { finality: { depth: 1 } } });
  unbind = bindIndexedHeights((chainId) => new PgLedgerReads(world.engine.pool).indexedHeight(chainId));
});

afterAll(async () => {
  unbind?.();
  await world?.stop();
  await killAllProcesses();
});

describe("waitForIndexed in the transaction lifecycle", () => {
  it("holds a read-after-write write at milestone 3 until the index has its block, then reports milestone 4", async () => {
    const id = await world.send({ to: world.hot, valueWei: "1", readAfterWrite: true });
    const waiting = await world.engine.waitForView(
      id,
      (v) => v.status === "waiting" && (v.waitingFor ?? []).some((w) => w.kind === "condition"),
      "the indexed wait",
    );
    expect(waiting.progress).toMatchObject({ milestone: 3, stage: "final" });

    const indexer = new LedgerIndexer({
      pool: world.engine.pool,
      chains: world.chains,
      shardCount: SHARD_COUNT,
      settings: { pollIntervalMs: 50, batchBlocks: 10, rangeBlocks: 100, leaseMs: 5_000 },
      replicaId: "raw-indexer",
      logger,
    });
    const controller = new AbortController();
    const fence = await takeChainShard(world.engine.pool, world.anvil.chainId, "raw-indexer");
    indexer.work.start({ ...fence, signal: controller.signal });
    try {
      const view = await world.settled(id, 30_000);
      expect(view.status).toBe("completed");
      expect(view.progress).toMatchObject({ milestone: 4, stage: "indexed", verdict: "confirmed" });
      const height = await new PgLedgerReads(world.engine.pool).indexedHeight(world.anvil.chainId);
      expect(height).toBeGreaterThanOrEqual(BigInt((view.output as { blockNumber: string }).blockNumber));
    } finally {
      controller.abort();
      await indexer.work.stop(fence.shard, "stopping");
    }
  });

  it("does not wait for the index when the write did not ask for it", async () => {
    const id = await world.send({ to: world.hot, valueWei: "2" });
    const view = await world.settled(id, 30_000);
    expect(view.progress).toMatchObject({ milestone: 3, stage: "final" });
  });
});

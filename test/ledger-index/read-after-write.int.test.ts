import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerIndexer } from "../../src/ledger-index/ledger-indexer.js";
import { PgLedgerReads } from "../../src/ledger-index/store/reads.js";
import { PgLedgerScope } from "../../src/ledger-index/store/scope.js";
import { ledgerIndexStores } from "../../src/roles/ledger-index-stores.js";
import {
  type ChainWorld,
  chainWorldApi,
  integratorKeys,
  startChainWorld,
} from "../chain/support/chain-world.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import {
  balancesFromNode,
  deployToken,
  HOLDERS,
  logger,
  mintSome,
  SHARD_COUNT,
  takeChainShard,
} from "./support/ledger-world.js";

/**
 * Read-after-write (docs/ledger-index.md): a write that asks for it reaches milestone 4
 * ("indexed") only once the Ledger Index has ingested its block, through a durable polled wait;
 * and the tenant-scoped balance endpoint reads what the index holds.
 */

let world: ChainWorld;

beforeAll(async () => {
  world = await startChainWorld({ file: "ledger-read-after-write", chain: { finality: { depth: 1 } } });
});

afterAll(async () => {
  await world?.stop();
  await killAllProcesses();
});

/** Runs the production LedgerIndexer's live tail and catch-up in this process; returns its stop. */
async function startIndexer(): Promise<() => Promise<void>> {
  const indexer = new LedgerIndexer({
    stores: ledgerIndexStores(world.engine.pool),
    chains: world.chains,
    shardCount: SHARD_COUNT,
    settings: { pollIntervalMs: 50, batchBlocks: 10, rangeBlocks: 100, leaseMs: 5_000 },
    replicaId: "raw-indexer",
    logger,
  });
  const controller = new AbortController();
  const fence = await takeChainShard(world.engine.pool, world.anvil.chainId, "raw-indexer");
  indexer.work.start({ ...fence, signal: controller.signal });
  const catchUp = indexer.startCatchUp();
  return async () => {
    controller.abort();
    await Promise.all([indexer.work.stop(fence.shard, "stopping"), catchUp.stop()]);
  };
}

describe("waitForIndexed in the transaction lifecycle", () => {
  it("holds a read-after-write write at milestone 3 until the index has its block, then reports milestone 4", async () => {
    const id = await world.send({ to: world.hot, valueWei: "1", readAfterWrite: true });
    const waiting = await world.engine.waitForView(
      id,
      (v) => v.status === "waiting" && (v.waitingFor ?? []).some((w) => w.kind === "condition"),
      "the indexed wait",
    );
    expect(waiting.progress).toMatchObject({ milestone: 3, stage: "final" });

    const stop = await startIndexer();
    try {
      const view = await world.settled(id, 30_000);
      expect(view.status).toBe("completed");
      expect(view.progress).toMatchObject({ milestone: 4, stage: "indexed", verdict: "confirmed" });
      const height = await new PgLedgerReads(world.engine.pool).indexedHeight(world.anvil.chainId);
      expect(height).toBeGreaterThanOrEqual(BigInt((view.output as { blockNumber: string }).blockNumber));
    } finally {
      await stop();
    }
  });

  it("does not wait for the index when the write did not ask for it", async () => {
    const id = await world.send({ to: world.hot, valueWei: "2" });
    const view = await world.settled(id, 30_000);
    expect(view.progress).toMatchObject({ milestone: 3, stage: "final" });
  });
});

describe("GET /v1/chains/{chainId}/tokens/{address}/balances/{holder}", () => {
  it("answers the key's organisation's tracked tokens from the index, and nothing of others", async () => {
    const api = chainWorldApi(world);
    const { acme, globex } = await integratorKeys(api);
    const { token, block } = await deployToken(world.anvil);
    const scope = new PgLedgerScope(world.engine.pool);
    await scope.add({
      chainId: world.anvil.chainId,
      orgId: "acme",
      address: token,
      kind: "erc20",
      fromHeight: block,
    });
    await mintSome(world.anvil, token, 8);
    const holder = HOLDERS[1] as string;
    const path = `/v1/chains/${world.anvil.chainId}/tokens/${token}/balances/${holder}`;
    const stop = await startIndexer();
    try {
      const head = await world.anvil.public.getBlockNumber();
      const reads = new PgLedgerReads(world.engine.pool);
      await waitUntil(
        "the token's blocks indexed",
        async () => ((await reads.indexedHeight(world.anvil.chainId)) ?? -1n) >= head,
      );
      const expected = (await balancesFromNode(world.anvil, token)).balances.get(holder.toLowerCase());
      const res = await request(api.app).get(path).set("authorization", `Bearer ${acme}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        token,
        holder: holder.toLowerCase(),
        balance: expected?.toString(),
        totalSupply: "36",
        tracking: { removedHeight: null },
      });
      const other = await request(api.app).get(path).set("authorization", `Bearer ${globex}`);
      expect(other.status).toBe(404);
      expect(other.body).toMatchObject({ code: "LEDGER_SCOPE_NOT_FOUND" });
      const bad = await request(api.app)
        .get(`/v1/chains/${world.anvil.chainId}/tokens/0x12/balances/${holder}`)
        .set("authorization", `Bearer ${acme}`);
      expect(bad.status).toBe(400);
    } finally {
      await stop();
      await api.close();
    }
  });
});

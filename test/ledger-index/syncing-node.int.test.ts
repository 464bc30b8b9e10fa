import { Writable } from "node:stream";
import { numberToHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerIndexer } from "../../src/ledger-index/ledger-indexer.js";
import { registerLedgerMetrics } from "../../src/ledger-index/ledger-metrics.js";
import { tailStep } from "../../src/ledger-index/live-tail.js";
import { PgLedgerRanges } from "../../src/ledger-index/store/ranges.js";
import { PgLedgerReads } from "../../src/ledger-index/store/reads.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics } from "../../src/observability/metrics.js";
import type { ShardFence } from "../../src/ownership/store/shard-fence.js";
import { sampleValue } from "../observability/metric-labels.js";
import type { Anvil } from "../support/anvil.js";
import type { TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";
import type { RpcProxy } from "../support/rpc-proxy.js";
import { type IndexedToken, startIndexedToken } from "./support/indexed-token.js";
import {
  anvilChains,
  balancesFromNode,
  deployerWallet,
  dumpIndex,
  HOLDERS,
  type LedgerDriver,
  mintSome,
  SHARD_COUNT,
  takeChainShard,
} from "./support/ledger-world.js";

/**
 * A node that is syncing or behind (docs/ledger-index.md, "A node that is syncing or behind"): a
 * real anvil behind the JSON-RPC fault proxy, which makes it answer like a syncing node (a lower
 * head, no blocks above it, `eth_syncing` with progress) or like one missing a block below its
 * head. The tail waits, says why, rolls nothing back, and once the node answers truly again it
 * continues with every log indexed once. A real reorganisation still rolls back, once the node
 * no longer says it syncs.
 */

const SETTINGS = { batchBlocks: 7, rangeBlocks: 20, depth: 12 };
let world: IndexedToken;
let anvil: Anvil;
let proxy: RpcProxy;
let db: TestDatabase;
let fence: ShardFence;
let token: `0x${string}`;
let driver: LedgerDriver;

beforeAll(async () => {
  world = await startIndexedToken({
    settings: SETTINGS,
    mints: 20,
    shardOwner: "tail",
    proxy: true,
    caughtUp: true,
  });
  ({ anvil, db, token, driver, fence } = world);
  proxy = world.proxy as RpcProxy;
});

afterAll(async () => {
  await world?.stop();
});

async function checkpoint(): Promise<bigint> {
  return ((await driver.tail.index.cursor(anvil.chainId)) as { height: bigint }).height;
}

async function chainRow() {
  const { rows } = await db.pool.query(
    "SELECT last_reorg_depth, last_reorg_at FROM ledger_chains WHERE chain_id = $1",
    [anvil.chainId],
  );
  return rows[0] as { last_reorg_depth: number; last_reorg_at: Date | null };
}

async function waiting() {
  const [health] = await new PgLedgerReads(db.pool).health();
  return health?.waiting ?? null;
}

/** The node's block at `height` as raw JSON-RPC, for the proxy to answer as the head. */
async function rawBlock(height: bigint): Promise<unknown> {
  return anvil.public.request({ method: "eth_getBlockByNumber", params: [numberToHex(height), false] });
}

/** From now on the node answers as if its chain ended at `height`: its head, and no block above. */
async function nodeEndsAt(height: bigint): Promise<void> {
  proxy.on("eth_getBlockByNumber", { result: await rawBlock(height) }, { when: (p) => p[0] === "latest" });
  proxy.on(
    "eth_getBlockByNumber",
    { result: null },
    { when: (p) => typeof p[0] === "string" && p[0].startsWith("0x") && BigInt(p[0]) > height },
  );
  proxy.on("eth_blockNumber", { result: numberToHex(height) });
}

function syncingAnswer(current: bigint, highest: bigint) {
  return {
    result: { startingBlock: "0x0", currentBlock: numberToHex(current), highestBlock: numberToHex(highest) },
  };
}

/** The index holds exactly the node's Transfer logs, each once, with the node's balances. */
async function expectIndexIsTheNodes(): Promise<void> {
  const node = await balancesFromNode(anvil, token);
  const index = await dumpIndex(db.pool, anvil.chainId);
  expect(index.transfers).toHaveLength(node.logs);
  expect(new Set(index.transfers.map((t) => `${t.block_number}:${t.log_index}`)).size).toBe(node.logs);
  expect(Object.fromEntries(index.balances.map((b) => [b.holder, b.balance]))).toEqual(
    Object.fromEntries([...node.balances].map(([h, v]) => [h, v.toString()])),
  );
}

describe("a node that is syncing or behind", () => {
  it("with a lower head while eth_syncing reports progress: the tail waits, rolls nothing back, then catches up", async () => {
    const before = await dumpIndex(db.pool, anvil.chainId);
    const indexed = await checkpoint();
    await mintSome(anvil, token, 4, 1);
    const realHead = await anvil.public.getBlockNumber();
    await nodeEndsAt(indexed - 5n);
    proxy.on("eth_syncing", syncingAnswer(indexed - 5n, realHead));

    for (let i = 0; i < 3; i++) {
      expect(await tailStep(driver.tail, fence)).toMatchObject({ kind: "waiting", reason: "node-syncing" });
    }
    expect(await waiting()).toMatchObject({
      reason: "node-syncing",
      detail: `the node is syncing (eth_syncing: block ${indexed - 5n} of ${realHead})`,
    });
    expect(await checkpoint()).toBe(indexed);
    expect(await dumpIndex(db.pool, anvil.chainId)).toEqual(before);
    expect(await chainRow()).toMatchObject({ last_reorg_depth: 0, last_reorg_at: null });

    proxy.clear();
    await driver.catchUp(fence);
    expect(await checkpoint()).toBe(realHead);
    expect(await waiting()).toBeNull();
    expect(await chainRow()).toMatchObject({ last_reorg_depth: 0, last_reorg_at: null });
    await expectIndexIsTheNodes();
  });

  it("with a lower head while eth_syncing says it does not sync: the tail waits as behind", async () => {
    const indexed = await checkpoint();
    await nodeEndsAt(indexed - 3n);
    proxy.on("eth_syncing", { result: false });
    expect(await tailStep(driver.tail, fence)).toMatchObject({
      kind: "waiting",
      reason: "node-behind",
      detail: `the node's head ${indexed - 3n} is below the checkpoint ${indexed}`,
    });
    expect(await waiting()).toMatchObject({ reason: "node-behind" });

    proxy.clear();
    await mintSome(anvil, token, 2, 2);
    await driver.catchUp(fence);
    expect(await waiting()).toBeNull();
    expect(await chainRow()).toMatchObject({ last_reorg_depth: 0, last_reorg_at: null });
    await expectIndexIsTheNodes();
  });

  it("without a block below its head: the tail waits instead of failing or rolling back", async () => {
    const indexed = await checkpoint();
    await mintSome(anvil, token, 4, 3);
    const missing = indexed + 2n;
    const rule = proxy.on(
      "eth_getBlockByNumber",
      { result: null },
      { when: (p) => p[0] === numberToHex(missing) },
    );
    expect(await tailStep(driver.tail, fence)).toMatchObject({
      kind: "waiting",
      reason: "node-block-missing",
    });
    expect((await waiting())?.detail).toMatch(/no block at a height below its head/);
    expect(rule.taken).toBeGreaterThan(0);
    expect(await checkpoint()).toBe(indexed);

    proxy.clear();
    await driver.catchUp(fence);
    expect(await waiting()).toBeNull();
    expect(await chainRow()).toMatchObject({ last_reorg_depth: 0, last_reorg_at: null });
    await expectIndexIsTheNodes();
  });

  it("on another branch while it syncs: waits; once it no longer syncs, the reorganisation rolls back", async () => {
    const from = deployerWallet(anvil).account?.address as string;
    const mint = (amount: bigint) => ({
      from,
      to: token,
      // mint(address,uint256)
      data: `0x40c10f19${(HOLDERS[2] as string).slice(2).padStart(64, "0")}${amount.toString(16).padStart(64, "0")}`,
    });
    const head = await anvil.public.getBlockNumber();
    await anvil.test.request({
      method: "anvil_reorg" as never,
      params: [3, [[mint(4242n), 1]]] as never,
    });
    proxy.on("eth_syncing", syncingAnswer(head, head + 100n));
    expect(await tailStep(driver.tail, fence)).toMatchObject({ kind: "waiting", reason: "node-syncing" });
    expect(await chainRow()).toMatchObject({ last_reorg_depth: 0, last_reorg_at: null });

    proxy.clear();
    expect(await tailStep(driver.tail, fence)).toMatchObject({
      kind: "rolled-back",
      to: head - 3n,
      depth: 3,
    });
    await driver.catchUp(fence);
    expect(await waiting()).toBeNull();
    expect(await chainRow()).toMatchObject({ last_reorg_depth: 3 });
    await expectIndexIsTheNodes();
  });

  it("the running indexer logs a wait once and its end, and the waiting-seconds gauge shows it", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const metrics = createMetrics("indexer");
    registerLedgerMetrics(metrics, () => new PgLedgerReads(db.pool).health());
    const indexer = new LedgerIndexer({
      stores: { index: driver.tail.index, scope: driver.scope, ranges: new PgLedgerRanges(db.pool) },
      chains: anvilChains(anvil, SETTINGS.depth, proxy.url),
      shardCount: SHARD_COUNT,
      settings: { pollIntervalMs: 50, batchBlocks: SETTINGS.batchBlocks, rangeBlocks: 20, leaseMs: 30_000 },
      replicaId: "in-process",
      logger: createLogger({ level: "info", stream, format: "json" }),
    });
    const logged = (message: string) => lines.filter((line) => line.includes(message)).length;
    const waitingSeconds = async () =>
      sampleValue(await metrics.registry.metrics(), "tenor_ledger_waiting_seconds", {
        chain_id: String(anvil.chainId),
      });

    const indexed = await checkpoint();
    await nodeEndsAt(indexed - 4n);
    proxy.on("eth_syncing", syncingAnswer(indexed - 4n, indexed + 10n));
    const syncingCalls = proxy.calls("eth_syncing").length;
    const controller = new AbortController();
    const lease = {
      ...(await takeChainShard(db.pool, anvil.chainId, "in-process")),
      signal: controller.signal,
    };
    await indexer.work.start(lease);
    try {
      await waitUntil("several waiting steps", () => proxy.calls("eth_syncing").length >= syncingCalls + 4);
      expect(logged("ledger live tail waiting for the node")).toBe(1);
      expect(lines.find((line) => line.includes("waiting for the node"))).toContain(
        '"reason":"node-syncing"',
      );
      await waitUntil("the waiting-seconds gauge above 0", async () => ((await waitingSeconds()) ?? 0) > 0);

      proxy.clear();
      await waitUntil(
        "the resume logged",
        () => logged("ledger live tail resumed: the node caught up") === 1,
      );
      await waitUntil("the waiting-seconds gauge back at 0", async () => (await waitingSeconds()) === 0);
      expect(await chainRow()).toMatchObject({ last_reorg_depth: 3 });
    } finally {
      controller.abort();
      await indexer.work.stop(lease.shard, "stopping");
      fence = await takeChainShard(db.pool, anvil.chainId, "tail");
    }
  });
});

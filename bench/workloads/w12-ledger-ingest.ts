import type pg from "pg";
import { type Address, createPublicClient, encodeFunctionData, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { TestToken } from "../../src/chain/contracts/artifacts.js";
import { ChainClients } from "../../src/chain/rpc-clients.js";
import { chainSchema } from "../../src/config/chains-schema.js";
import { ChainReader } from "../../src/ledger-index/chain-reader.js";
import { chainShardKey, LedgerIndexer } from "../../src/ledger-index/ledger-indexer.js";
import { transferColumns } from "../../src/ledger-index/store/transfers.js";
import { createLogger } from "../../src/observability/logger.js";
import { shardOf } from "../../src/ownership/shard-map.js";
import { bumpOwnerEpoch } from "../../src/ownership/store/shard-fence.js";
import { ledgerIndexStores } from "../../src/roles/ledger-index-stores.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../test/support/anvil.js";
import { nowMs } from "../lib/concurrency.js";
import { measure, notMeasured, type SystemResult, type Workload } from "./types.js";

const LOGS_PER_BLOCK = 10;
const BATCH_BLOCKS = 100;
const SHARDS = 1;

/**
 * W12: the Ledger Index ingesting a prepared anvil chain (blocks × 10 ERC-20 Transfer logs) into
 * PostgreSQL, against the floor: a bare viem `getLogs` loop inserting the same rows into the same
 * table. Tenor is measured as it runs in the indexer role — the live tail anchors at the settled
 * height and the history is caught up in leased ranges — with one replica and with two; and the
 * live tail alone (every block read and stored, parent hashes checked) over the whole chain.
 */
export const w12LedgerIngest: Workload = {
  id: "W12",
  title: "ledger ingest",
  async run(ctx) {
    const blocks = ctx.quick ? 300 : 10_000;
    const rangeBlocks = ctx.quick ? 50 : 1_000;
    const anvil = await startAnvil();
    const systems: Record<string, SystemResult> = {
      bullmq: notMeasured("no chain indexing"),
      dbos: notMeasured("no chain indexing"),
    };
    try {
      ctx.log(`  preparing ${blocks} blocks × ${LOGS_PER_BLOCK} Transfer logs ...`);
      const token = await prepareChain(anvil, blocks);
      const head = await anvil.public.getBlockNumber();
      const logs = blocks * LOGS_PER_BLOCK;
      const rate = (ms: number) => ({
        logsPerSec: logs / (ms / 1000),
        blocksPerSec: Number(head) / (ms / 1000),
      });
      systems.floor = await measure(ctx, "floor", async () => {
        const ms = await withDatabase(ctx, "w10-floor", (pool) => floorLoop(pool, anvil, token, head));
        return { status: "ok", figures: rate(ms), details: { wallMs: ms } };
      });
      systems.tenor = await measure(ctx, "tenor", async () => {
        const settings = { pollIntervalMs: 20, batchBlocks: BATCH_BLOCKS, rangeBlocks, leaseMs: 30_000 };
        const one = await withDatabase(ctx, "w10-one", (pool) =>
          indexAll(pool, anvil, token, 2, settings, 1),
        );
        const two = await withDatabase(ctx, "w10-two", (pool) =>
          indexAll(pool, anvil, token, 2, settings, 2),
        );
        const tail = await withDatabase(ctx, "w10-tail", (pool) =>
          indexAll(pool, anvil, token, 10_000, settings, 1),
        );
        return {
          status: "ok",
          figures: rate(one),
          details: {
            oneReplicaMs: one,
            twoReplicasMs: two,
            twoReplicasSpeedup: one / two,
            liveTailOnlyMs: tail,
            liveTailBlocksPerSec: Number(head) / (tail / 1000),
          },
        };
      });
    } finally {
      await anvil.stop();
    }
    return {
      id: "W12",
      title: "ledger ingest",
      status: "ok",
      params: { blocks, logsPerBlock: LOGS_PER_BLOCK, batchBlocks: BATCH_BLOCKS, rangeBlocks },
      systems,
    };
  },
};

async function withDatabase(
  ctx: Parameters<Workload["run"]>[0],
  label: string,
  fn: (pool: pg.Pool) => Promise<number>,
): Promise<number> {
  const pool = ctx.env.pool(await ctx.env.freshDatabase(label), 8);
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

/** Deploys a token and mines `blocks` blocks of LOGS_PER_BLOCK mints each (automine off). */
async function prepareChain(anvil: Anvil, blocks: number): Promise<Address> {
  const from = privateKeyToAccount(ANVIL_KEYS[0]).address;
  // One HTTP request carries a block's sends (JSON-RPC batch): preparation is not what is measured.
  const batched = createPublicClient({ transport: http(anvil.url, { batch: { batchSize: 100, wait: 0 } }) });
  const send = (params: Record<string, unknown>) =>
    batched.request({ method: "eth_sendTransaction" as never, params: [params] as never }) as Promise<Hex>;
  const holders = ANVIL_KEYS.slice(2, 6).map((key) => privateKeyToAccount(key).address);
  const deployHash = await send({
    from,
    data: `${TestToken.bytecode}${encodeArgs()}`,
    gas: "0x300000",
  });
  await anvil.mine(1);
  const receipt = await anvil.public.getTransactionReceipt({ hash: deployHash });
  const token = receipt.contractAddress as Address;
  await anvil.test.setAutomine(false);
  let nonce = 1;
  for (let b = 0; b < blocks; b++) {
    const sends: Promise<Hex>[] = [];
    for (let i = 0; i < LOGS_PER_BLOCK; i++) {
      const to = holders[i % holders.length] as Address;
      const data = encodeFunctionData({
        abi: TestToken.abi,
        functionName: "mint",
        args: [to, BigInt(b + i + 1)],
      });
      sends.push(send({ from, to: token, data, gas: "0x20000", nonce: `0x${(nonce++).toString(16)}` }));
    }
    await Promise.all(sends);
    await anvil.mine(1);
  }
  return token.toLowerCase() as Address;
}

/** ABI-encoded constructor arguments ("B", "B", 0). */
function encodeArgs(): string {
  const word = (hex: string) => hex.padStart(64, "0");
  const text = word(Buffer.from("B").toString("hex").padEnd(64, "0"));
  return `${word("60")}${word("a0")}${word("0")}${word("1")}${text.slice(0, 64)}${word("1")}${text.slice(0, 64)}`;
}

function chainsOf(anvil: Anvil, depth: number): ChainClients {
  return new ChainClients({
    chains: [
      chainSchema.parse({ id: anvil.chainId, name: "anvil", rpcUrls: [anvil.url], finality: { depth } }),
    ],
    durable: { confirmationWatcher: { intervalMs: 250 } } as never,
  });
}

/** The floor: getLogs in BATCH_BLOCKS chunks, one unnest insert per chunk into the same table. */
async function floorLoop(pool: pg.Pool, anvil: Anvil, token: Address, head: bigint): Promise<number> {
  const reader = new ChainReader(chainsOf(anvil, 1).get(anvil.chainId).public, { depth: 1 });
  const begun = nowMs();
  for (let from = 0n; from <= head; from += BigInt(BATCH_BLOCKS)) {
    const to = from + BigInt(BATCH_BLOCKS) - 1n > head ? head : from + BigInt(BATCH_BLOCKS) - 1n;
    const logs = await reader.transfers([token], from, to);
    if (logs.length === 0) continue;
    await pool.query(
      `INSERT INTO ledger_erc20_transfers (chain_id, block_number, log_index, block_hash, tx_hash, token, from_address, to_address, value)
       SELECT $1, * FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::numeric[])
       ON CONFLICT DO NOTHING`,
      [anvil.chainId, ...transferColumns(logs)],
    );
  }
  return nowMs() - begun;
}

/**
 * The production LedgerIndexer (live tail on the chain's shard + `replicas` catch-up loops) from
 * an empty index to the head; returns the wall time in ms.
 */
async function indexAll(
  pool: pg.Pool,
  anvil: Anvil,
  token: Address,
  depth: number,
  settings: { pollIntervalMs: number; batchBlocks: number; rangeBlocks: number; leaseMs: number },
  replicas: number,
): Promise<number> {
  await pool.query(
    "INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height) VALUES ($1, 'bench', $2, 'erc20', 0)",
    [anvil.chainId, token],
  );
  const head = await anvil.public.getBlockNumber();
  const logger = createLogger({ level: "error" });
  const indexers = Array.from(
    { length: replicas },
    (_, i) =>
      new LedgerIndexer({
        stores: ledgerIndexStores(pool),
        chains: chainsOf(anvil, depth),
        shardCount: SHARDS,
        settings,
        replicaId: `bench-${i}`,
        logger,
      }),
  );
  const shard = shardOf(chainShardKey(anvil.chainId), SHARDS);
  const client = await pool.connect();
  const epoch = await bumpOwnerEpoch(client, "indexer", shard, "bench-0", 2_000).finally(() =>
    client.release(),
  );
  const controller = new AbortController();
  const begun = nowMs();
  (indexers[0] as LedgerIndexer).work.start({ domain: "indexer", shard, epoch, signal: controller.signal });
  const loops = indexers.map((indexer) => indexer.startCatchUp());
  try {
    for (;;) {
      const { rows } = await pool.query(
        `SELECT c.indexed_height::text AS h, (SELECT count(*)::int FROM ledger_ranges WHERE completed_at IS NULL) AS open
         FROM ledger_chains c WHERE c.chain_id = $1`,
        [anvil.chainId],
      );
      if (rows[0] && BigInt(rows[0].h) >= head && rows[0].open === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return nowMs() - begun;
  } finally {
    controller.abort();
    await Promise.all([
      (indexers[0] as LedgerIndexer).work.stop(shard, "stopping"),
      ...loops.map((l) => l.stop()),
    ]);
  }
}

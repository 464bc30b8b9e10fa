import type pg from "pg";
import { type Address, createWalletClient, type Hex, http, type WalletClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { TestToken } from "../../../src/chain/contracts/artifacts.js";
import { ChainClients } from "../../../src/chain/rpc-clients.js";
import { chainSchema } from "../../../src/config/chains-schema.js";
import { workRange } from "../../../src/ledger-index/catch-up.js";
import { ChainReader } from "../../../src/ledger-index/chain-reader.js";
import { chainShardKey } from "../../../src/ledger-index/ledger-indexer.js";
import { type LiveTailOptions, tailStep } from "../../../src/ledger-index/live-tail.js";
import { PgLedgerIndex } from "../../../src/ledger-index/store/chain-checkpoint.js";
import { PgLedgerRanges } from "../../../src/ledger-index/store/ranges.js";
import { PgLedgerScope } from "../../../src/ledger-index/store/scope.js";
import { createLogger } from "../../../src/observability/logger.js";
import { shardOf } from "../../../src/ownership/shard-map.js";
import { bumpOwnerEpoch, type ShardFence } from "../../../src/ownership/store/shard-fence.js";
import { ANVIL_KEYS, type Anvil } from "../../support/anvil.js";

export const SHARD_COUNT = 4;
export const logger = createLogger({ level: "error" });

/** Holders the tests move tokens between (anvil accounts 2..5). */
export const HOLDERS = ANVIL_KEYS.slice(2, 6).map((k) => privateKeyToAccount(k).address);

/** The deployer's wallet on `anvil` (account 0, the token owner). */
export function deployerWallet(anvil: Anvil): WalletClient {
  return createWalletClient({
    account: privateKeyToAccount(ANVIL_KEYS[0]),
    chain: { ...foundry, id: anvil.chainId },
    transport: http(anvil.url),
  });
}

/** Deploys a TestToken; returns its lowercase address and deployment block. */
export async function deployToken(anvil: Anvil, symbol = "TT"): Promise<{ token: Address; block: bigint }> {
  const hash = await deployerWallet(anvil).deployContract({
    abi: TestToken.abi,
    bytecode: TestToken.bytecode,
    args: [symbol, symbol, 0],
    account: privateKeyToAccount(ANVIL_KEYS[0]),
    chain: { ...foundry, id: anvil.chainId },
  });
  const receipt = await anvil.public.waitForTransactionReceipt({ hash });
  return { token: (receipt.contractAddress as Address).toLowerCase() as Address, block: receipt.blockNumber };
}

/**
 * Mints `count` times to the holders in turn (one block each with automine), with a varying
 * amount so a lost or doubled row changes a balance. `salt` makes a branch's amounts differ.
 */
export async function mintSome(anvil: Anvil, token: Address, count: number, salt = 0): Promise<void> {
  const wallet = deployerWallet(anvil);
  for (let i = 0; i < count; i++) {
    const hash = await wallet.writeContract({
      address: token,
      abi: TestToken.abi,
      functionName: "mint",
      args: [HOLDERS[i % HOLDERS.length] as Address, BigInt(1 + i + salt * 1000)],
      account: privateKeyToAccount(ANVIL_KEYS[0]),
      chain: { ...foundry, id: anvil.chainId },
    });
    await anvil.public.waitForTransactionReceipt({ hash });
  }
}

/** A chain handle on `anvil` (or on `rpcUrl`, a fault proxy in front of it) with the given finality depth. */
export function anvilChains(anvil: Anvil, depth = 2, rpcUrl = anvil.url): ChainClients {
  return new ChainClients({
    chains: [chainSchema.parse({ id: anvil.chainId, name: "anvil", rpcUrls: [rpcUrl], finality: { depth } })],
    durable: { confirmationWatcher: { intervalMs: 250 } } as never,
  });
}

/** Takes the chain's indexer shard for `owner` (a new epoch) and returns its fence. */
export async function takeChainShard(pool: pg.Pool, chainId: number, owner: string): Promise<ShardFence> {
  const shard = shardOf(chainShardKey(chainId), SHARD_COUNT);
  const client = await pool.connect();
  try {
    const epoch = await bumpOwnerEpoch(client, "indexer", shard, owner, 2_000);
    return { domain: "indexer", shard, epoch };
  } finally {
    client.release();
  }
}

/**
 * The in-process index of one database on one anvil: drives tail steps and catch-up by hand.
 * `rpcUrl` puts a fault proxy (test/support/rpc-proxy.ts) between the index and the node.
 */
export function ledgerDriver(
  pool: pg.Pool,
  anvil: Anvil,
  settings = { batchBlocks: 7, rangeBlocks: 20, depth: 2 },
  rpcUrl = anvil.url,
) {
  const chain = anvilChains(anvil, settings.depth, rpcUrl).get(anvil.chainId);
  const reader = new ChainReader(chain.public, chain.config.finality);
  const tail: LiveTailOptions = {
    chainId: anvil.chainId,
    reader,
    index: new PgLedgerIndex(pool),
    scope: new PgLedgerScope(pool),
    batchBlocks: settings.batchBlocks,
    rangeBlocks: settings.rangeBlocks,
    logger,
  };
  const ranges = new PgLedgerRanges(pool);
  return {
    tail,
    scope: tail.scope,
    /** Runs tail steps until the checkpoint is the head and every catch-up range is complete. */
    async catchUp(fence: ShardFence): Promise<void> {
      for (let guard = 0; guard < 10_000; guard++) {
        const step = await tailStep(tail, fence);
        const lease = await ranges.claim([anvil.chainId], "driver", 30_000);
        if (lease)
          await workRange(
            {
              ranges,
              readers: new Map([[anvil.chainId, reader]]),
              owner: "driver",
              leaseMs: 30_000,
              batchBlocks: settings.batchBlocks,
              pollIntervalMs: 50,
              logger,
            },
            lease,
            new AbortController().signal,
          );
        if (step.kind === "idle" && !lease) return;
      }
      throw new Error("the index did not settle");
    },
  };
}

export type LedgerDriver = ReturnType<typeof ledgerDriver>;

/** Every row of the read model, in key order: what "the same index" means. */
export async function dumpIndex(pool: pg.Pool, chainId: number) {
  const transfers = await pool.query(
    `SELECT block_number::text, log_index, block_hash, tx_hash, token, from_address, to_address, value::text
     FROM ledger_erc20_transfers WHERE chain_id = $1 ORDER BY block_number, log_index`,
    [chainId],
  );
  // A holder whose every transfer was rolled back keeps a zero row; a fresh index never made one.
  const balances = await pool.query(
    `SELECT token, holder, balance::text FROM ledger_erc20_balances
     WHERE chain_id = $1 AND balance <> 0 ORDER BY token, holder`,
    [chainId],
  );
  const supplies = await pool.query(
    `SELECT token, total_supply::text FROM ledger_erc20_supplies WHERE chain_id = $1 AND total_supply <> 0 ORDER BY token`,
    [chainId],
  );
  return { transfers: transfers.rows, balances: balances.rows, supplies: supplies.rows };
}

/** Balances per holder computed straight from the node's Transfer logs of `token` up to `toBlock`. */
export async function balancesFromNode(anvil: Anvil, token: Address, toBlock?: bigint) {
  const reader = new ChainReader(anvilChains(anvil).get(anvil.chainId).public, { depth: 1 });
  const logs = await reader.transfers([token], 0n, toBlock ?? (await anvil.public.getBlockNumber()));
  const balances = new Map<string, bigint>();
  for (const log of logs) {
    balances.set(log.to, (balances.get(log.to) ?? 0n) + log.value);
  }
  return { logs: logs.length, balances };
}

export type { Hex };

import type { Pool } from "pg";
import type { Hex, PublicClient } from "viem";
import type { ExecutionClient, SignalDelivery } from "../../engine/execution-client.js";
import type { Logger } from "../../observability/logger.js";
import { startRepeatingTask } from "../../transport/repeating-task.js";
import { payerBalance } from "../lifecycle/node-steps.js";
import { chainTransaction } from "../lifecycle/transaction-workflow.js";
import type { ChainClients, ChainHandle } from "../rpc-clients.js";
import { type ChainWait, listChainWaits } from "../store/chain-watch-sql.js";
import { BlockFollower } from "./block-follower.js";
import { receiptOf } from "./block-receipts.js";

/** Most waiting executions one tick looks at per chain. */
const BATCH = 500;

/** Waits examined at once within one tick (most settle from the followed blocks without a call). */
const PARALLEL = 16;

export interface ConfirmationWatcherOptions {
  pool: Pool;
  /** Delivers the watcher's findings as signals (idempotent by key, so a repeated tick is harmless). */
  executions: Pick<ExecutionClient, "signalMany">;
  chains: ChainClients;
  /** True when this replica owns the execution's shard (docs/ownership.md); others leave it alone. */
  owns: (executionId: string) => boolean;
  logger: Logger;
}

/**
 * The per-chain confirmation watcher (docs/chains.md): every chain's `watchIntervalMs` it reads
 * the transactions waiting on that chain, follows the chain's new blocks (block receipts where
 * the node offers them) and wakes those whose condition now holds — a receipt for one of the
 * hashes (inclusion), the finality rule met or the receipt gone in a reorg (finality), the payer
 * funded (funding) — all in one batch of signals. Signals carry an idempotency key per wait, so
 * ticks of two replicas during a shard hand-over deliver each finding once.
 */
export function startConfirmationWatcher(options: ConfirmationWatcherOptions): { stop(): Promise<void> } {
  const tasks = options.chains.all().map((chain) => {
    const follower = new BlockFollower();
    return startRepeatingTask(
      chain.watchIntervalMs,
      () => watchOnce(options, chain, follower),
      (error) =>
        options.logger.warn("confirmation watcher tick failed", {
          chainId: chain.config.id,
          error: error.message,
        }),
    );
  });
  return {
    async stop() {
      await Promise.all(tasks.map((t) => t.stop()));
    },
  };
}

/**
 * One tick on one chain; exported for tests and the operator. Without the chain's `follower` of
 * earlier ticks it follows only the head block, and each waiting hash is read on its own.
 * Returns how many signals were stored.
 */
export async function watchOnce(
  options: ConfirmationWatcherOptions,
  chain: ChainHandle,
  follower: BlockFollower = new BlockFollower(),
): Promise<number> {
  const waits = (await listChainWaits(options.pool, chainTransaction.name, chain.config.id, BATCH)).filter(
    (w) => options.owns(w.executionId),
  );
  if (waits.length === 0) return 0;
  const waited = waitedHashes(waits);
  const head = await follower.advance(chain.public, waited);
  follower.keepChecked(waited);
  const finalized =
    chain.config.finality === "finalized"
      ? (await chain.public.getBlock({ blockTag: "finalized" })).number
      : null;
  const tip = { head, finalized, depth: depthOf(chain) };
  const deliveries: SignalDelivery[] = [];
  const visit = async (wait: ChainWait) => {
    const finding = await examine(chain.public, follower, wait, tip);
    if (!finding) return;
    const signal = String(wait.details.signal);
    deliveries.push({
      executionId: wait.executionId,
      name: signal,
      payload: finding,
      idempotencyKey: `${wait.executionId}:${signal}`,
    });
  };
  // A few executions at a time: one slow receipt read does not hold up the rest of the tick.
  for (let i = 0; i < waits.length; i += PARALLEL) {
    await Promise.all(waits.slice(i, i + PARALLEL).map(visit));
  }
  if (deliveries.length === 0) return 0;
  const outcomes = await options.executions.signalMany(deliveries);
  return [...outcomes.values()].filter((o) => o === "delivered").length;
}

function depthOf(chain: ChainHandle): number {
  return chain.config.finality === "finalized" ? 0 : chain.config.finality.depth;
}

/** Every hash the waits name: inclusion candidates and included transactions awaiting finality. */
function waitedHashes(waits: readonly ChainWait[]): Set<Hex> {
  const hashes = new Set<Hex>();
  for (const { kind, details } of waits) {
    if (kind !== "confirmation") continue;
    if (details.stage === "inclusion") for (const h of details.hashes as Hex[]) hashes.add(h);
    else hashes.add(details.hash as Hex);
  }
  return hashes;
}

interface Tip {
  head: bigint;
  finalized: bigint | null;
  depth: number;
}

async function examine(
  client: PublicClient,
  follower: BlockFollower,
  wait: ChainWait,
  tip: Tip,
): Promise<Record<string, unknown> | undefined> {
  const d = wait.details;
  if (wait.kind === "funding") {
    const balance = await payerBalance(client, d.destination as Parameters<typeof payerBalance>[1]);
    return balance >= BigInt(String(d.requiredWei)) ? { balanceWei: balance.toString() } : undefined;
  }
  if (d.stage === "inclusion") return included(client, follower, d.hashes as Hex[]);
  const block = {
    hash: d.hash as Hex,
    blockHash: d.blockHash as Hex,
    blockNumber: BigInt(String(d.blockNumber)),
  };
  return finality(client, follower, block, tip);
}

/**
 * A receipt for one of `hashes`: from a followed block, else — only for a hash that has not
 * had one since the follower has been following (mined before it started, or while it was down
 * or behind) — from a read of that hash alone.
 */
async function included(client: PublicClient, follower: BlockFollower, hashes: readonly Hex[]) {
  for (const hash of hashes) {
    const seen = follower.seen(hash);
    if (seen) return { hash, blockNumber: seen.blockNumber.toString(), blockHash: seen.blockHash };
  }
  for (const hash of hashes) {
    if (follower.wasChecked(hash)) continue;
    const receipt = await receiptOf(client, hash);
    follower.markChecked(hash);
    if (receipt) return { hash, blockNumber: receipt.blockNumber.toString(), blockHash: receipt.blockHash };
  }
  return undefined;
}

/**
 * Final (with the receipt's status) or `reorged`: decided from the followed blocks when the
 * included block is among them, else from a read of the receipt.
 */
async function finality(
  client: PublicClient,
  follower: BlockFollower,
  included: { hash: Hex; blockHash: Hex; blockNumber: bigint },
  tip: Tip,
): Promise<Record<string, unknown> | undefined> {
  // The followed block at that height is another one: the included block left the chain.
  const atHeight = follower.blockAt(included.blockNumber);
  if (atHeight !== undefined && atHeight !== included.blockHash) return { outcome: "reorged" };
  const seen = follower.seen(included.hash);
  const followed = seen && follower.blockAt(seen.blockNumber) === seen.blockHash ? seen : undefined;
  if (followed && followed.blockHash !== included.blockHash) return { outcome: "reorged" };
  if (followed && !isFinal(followed.blockNumber, tip)) return undefined;
  if (followed?.status) return { outcome: "final", status: followed.status };
  const receipt = await receiptOf(client, included.hash);
  if (!receipt || receipt.blockHash !== included.blockHash) return { outcome: "reorged" };
  return isFinal(receipt.blockNumber, tip) ? { outcome: "final", status: receipt.status } : undefined;
}

function isFinal(blockNumber: bigint, tip: Tip): boolean {
  return tip.finalized !== null
    ? blockNumber <= tip.finalized
    : tip.head - blockNumber + 1n >= BigInt(tip.depth);
}

import type { Pool } from "pg";
import { type Hex, type PublicClient, TransactionReceiptNotFoundError } from "viem";
import type { ExecutionClient } from "../../engine/execution-client.js";
import type { Logger } from "../../observability/logger.js";
import { startRepeatingTask } from "../../transport/repeating-task.js";
import { payerBalance } from "../lifecycle/node-steps.js";
import { chainTransaction } from "../lifecycle/transaction-workflow.js";
import type { ChainClients, ChainHandle } from "../rpc-clients.js";
import { type ChainWait, listChainWaits } from "../store/chain-watch-sql.js";

/** Most waiting executions one tick looks at per chain. */
const BATCH = 500;

/** Waiting executions examined at once within one tick. */
const PARALLEL = 16;

export interface ConfirmationWatcherOptions {
  pool: Pool;
  /** Delivers the watcher's findings as signals (idempotent by key, so a repeated tick is harmless). */
  executions: Pick<ExecutionClient, "signal">;
  chains: ChainClients;
  /** True when this replica owns the execution's shard (docs/ownership.md); others leave it alone. */
  owns: (executionId: string) => boolean;
  logger: Logger;
}

/**
 * The per-chain confirmation watcher (docs/chains.md): every chain's `watchIntervalMs` it reads
 * the transactions waiting on that chain and wakes those whose condition now holds — a receipt
 * for one of the hashes (inclusion), the finality rule met or the receipt gone in a reorg
 * (finality), the payer funded (funding). Signals carry an idempotency key per wait, so ticks of
 * two replicas during a shard hand-over deliver each finding once.
 */
export function startConfirmationWatcher(options: ConfirmationWatcherOptions): { stop(): Promise<void> } {
  const tasks = options.chains.all().map((chain) =>
    startRepeatingTask(
      chain.watchIntervalMs,
      () => watchOnce(options, chain),
      (error) =>
        options.logger.warn("confirmation watcher tick failed", {
          chainId: chain.config.id,
          error: error.message,
        }),
    ),
  );
  return {
    async stop() {
      await Promise.all(tasks.map((t) => t.stop()));
    },
  };
}

/** One tick on one chain; exported for tests and the operator. */
export async function watchOnce(options: ConfirmationWatcherOptions, chain: ChainHandle): Promise<number> {
  const waits = (await listChainWaits(options.pool, chainTransaction.name, chain.config.id, BATCH)).filter(
    (w) => options.owns(w.executionId),
  );
  if (waits.length === 0) return 0;
  const head = await chain.public.getBlockNumber();
  const finalized =
    chain.config.finality === "finalized"
      ? (await chain.public.getBlock({ blockTag: "finalized" })).number
      : null;
  let delivered = 0;
  const visit = async (wait: ChainWait) => {
    const finding = await examine(chain.public, wait, { head, finalized, depth: depthOf(chain) });
    if (!finding) return;
    const signal = String(wait.details.signal);
    await options.executions
      .signal(wait.executionId, signal, finding, { idempotencyKey: `${wait.executionId}:${signal}` })
      .then(() => delivered++)
      .catch((error: Error) =>
        options.logger.debug("watcher signal not delivered", {
          executionId: wait.executionId,
          error: error.message,
        }),
      );
  };
  // A few executions at a time: one slow receipt read does not hold up the rest of the tick.
  for (let i = 0; i < waits.length; i += PARALLEL) {
    await Promise.all(waits.slice(i, i + PARALLEL).map(visit));
  }
  return delivered;
}

function depthOf(chain: ChainHandle): number {
  return chain.config.finality === "finalized" ? 0 : chain.config.finality.depth;
}

async function examine(
  client: PublicClient,
  wait: ChainWait,
  tip: { head: bigint; finalized: bigint | null; depth: number },
): Promise<Record<string, unknown> | undefined> {
  const d = wait.details;
  if (wait.kind === "funding") {
    const balance = await payerBalance(client, d.destination as Parameters<typeof payerBalance>[1]);
    return balance >= BigInt(String(d.requiredWei)) ? { balanceWei: balance.toString() } : undefined;
  }
  if (d.stage === "inclusion") {
    for (const hash of d.hashes as Hex[]) {
      const receipt = await receiptOf(client, hash);
      if (receipt) return { hash, blockNumber: receipt.blockNumber.toString(), blockHash: receipt.blockHash };
    }
    return undefined;
  }
  const receipt = await receiptOf(client, d.hash as Hex);
  if (!receipt || receipt.blockHash !== d.blockHash) return { outcome: "reorged" };
  const final =
    tip.finalized !== null
      ? receipt.blockNumber <= tip.finalized
      : tip.head - receipt.blockNumber + 1n >= BigInt(tip.depth);
  return final ? { outcome: "final", status: receipt.status } : undefined;
}

async function receiptOf(client: PublicClient, hash: Hex) {
  try {
    return await client.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return undefined;
    throw error;
  }
}

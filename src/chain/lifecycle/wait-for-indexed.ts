import type { WorkflowContext } from "../../engine/context.js";
import type { Duration } from "../../engine/duration.js";
import { defineService } from "../../engine/services.js";

/** Reads a chain's indexed height (PgLedgerReads.indexedHeight); null before the index first ran. */
export type IndexedHeightReader = (chainId: number) => Promise<bigint | null>;

/**
 * The reader `waitForIndexed` polls with, as a service (src/engine/services.ts): the runner role
 * provides it over the Ledger Index's store; a workflow that waits for the index declares it.
 */
export const indexedHeightsService = defineService<IndexedHeightReader>("ledger.indexed-heights");

export interface WaitForIndexedOptions {
  /** Poll period; default 500 ms. */
  every?: Duration;
  /** Give up after this long (counted from the first encounter); default 1 h. */
  timeout?: Duration;
  /** Journal name of the wait; default `indexed:<chainId>:<blockNumber>`. */
  name?: string;
}

/**
 * Read-after-write (docs/ledger-index.md): waits durably — a polled condition in the journal,
 * each poll a turn, nothing held in memory between polls — until the Ledger Index of `chainId`
 * has ingested `blockNumber`. The workflow declares `indexedHeightsService`. Resolves `{ indexed: true }`, or `{ indexed: false }` past the
 * timeout (on-chain finality and indexed visibility are separate facts; the caller decides).
 */
export async function waitForIndexed(
  ctx: WorkflowContext,
  chainId: number,
  blockNumber: bigint | string,
  options: WaitForIndexedOptions = {},
): Promise<{ indexed: boolean }> {
  const target = BigInt(blockNumber);
  const result = await ctx.waitFor(options.name ?? `indexed:${chainId}:${target}`, {
    every: options.every ?? "500ms",
    timeout: options.timeout ?? "1h",
    check: async () => {
      // Unavailable here (not a runner), the poll is a failed read and the wait keeps polling.
      const height = await ctx.service(indexedHeightsService)(chainId);
      return height !== null && height >= target;
    },
  });
  return { indexed: "satisfied" in result };
}

/**
 * The transaction lifecycle's milestone 4: after finality, waits for the index (`waitForIndexed`)
 * and reports `{ milestone: 4, stage: "indexed" }`; past the wait's timeout the progress stays at
 * milestone 3 (the write itself is settled either way).
 */
export async function reportIndexed(
  ctx: WorkflowContext,
  write: { chainId: number; blockNumber: string; hash: string; verdict: string },
): Promise<void> {
  if (!(await waitForIndexed(ctx, write.chainId, write.blockNumber)).indexed) return;
  ctx.progress({
    milestone: 4,
    stage: "indexed",
    hash: write.hash,
    verdict: write.verdict,
    blockNumber: write.blockNumber,
  });
}

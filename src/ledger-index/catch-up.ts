import { LEDGER_INDEX_ERRORS } from "../errors/ledger-index-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import type { ChainReader } from "./chain-reader.js";
import { isUnverifiedLogs } from "./logs-check.js";
import { pause } from "./pause.js";
import type { LedgerLogs } from "./store/domain-logs.js";
import type { PgLedgerRanges, RangeLease } from "./store/ranges.js";

/** Reads of one chunk the blocks may refuse in a row before the range is given up to its lease. */
const UNVERIFIED_READS = 5;

export interface CatchUpOptions {
  ranges: PgLedgerRanges;
  readers: ReadonlyMap<number, ChainReader>;
  /** This replica's id, recorded as lease owner and completer. */
  owner: string;
  leaseMs: number;
  /** Most blocks per cursor commit. */
  batchBlocks: number;
  /** Idle wait between claims when no range is open, in ms. */
  pollIntervalMs: number;
  logger: Logger;
  /** A test seam: awaited after each cursor commit. Fault tests hold a replica mid-range here. */
  afterCommit?: (lease: RangeLease & { completed: boolean }) => Promise<void>;
}

/**
 * Works one leased range to completion: the logs of its contract's kinds, `batchBlocks` at a time,
 * each chunk checked against its blocks (ChainReader.checkedLogs) and committed with the cursor under the lease's epoch (which renews the lease). Stops
 * early when `signal` aborts; the unfinished rest is offered again once the lease expires.
 *
 * @throws TenorError LEDGER_RANGE_LEASE_LOST when another replica claimed the range since.
 */
export async function workRange(
  options: CatchUpOptions,
  lease: RangeLease,
  signal: AbortSignal,
): Promise<boolean> {
  const reader = options.readers.get(lease.chainId);
  if (!reader) return false;
  let current: RangeLease = lease;
  let refused = 0;
  while (!signal.aborted && current.nextBlock <= current.toBlock) {
    const through = min(current.toBlock, current.nextBlock + BigInt(options.batchBlocks) - 1n);
    const targets = current.kinds.map((kind) => ({ address: current.address, kind }));
    let logs: LedgerLogs;
    try {
      logs = await reader.checkedLogs(targets, await reader.blocks(current.nextBlock, through));
    } catch (error) {
      // A short or unconfirmed answer commits nothing: the chunk is read again, and after
      // UNVERIFIED_READS refusals the range is left to its lease's expiry (claimed again later).
      if (!isUnverifiedLogs(error) || ++refused >= UNVERIFIED_READS) throw error;
      options.logger.warn("ledger logs answer refused: the range's chunk is read again", {
        rangeId: lease.id,
        chainId: lease.chainId,
        error: error.message,
      });
      await pause(options.pollIntervalMs, signal);
      continue;
    }
    refused = 0;
    const committed = await options.ranges.commit(current, through, logs, options.owner, options.leaseMs);
    if (committed.completed)
      options.logger.info("ledger range completed", {
        rangeId: lease.id,
        chainId: lease.chainId,
        fromBlock: lease.fromBlock.toString(),
        toBlock: lease.toBlock.toString(),
      });
    await options.afterCommit?.(committed);
    current = committed;
  }
  return current.nextBlock > current.toBlock;
}

/**
 * The catch-up loop every indexer replica runs: claim an open range, work it, repeat; idle for
 * `pollIntervalMs` when none is open. A lost lease is logged and the range left to its new holder.
 */
export async function runCatchUp(options: CatchUpOptions, signal: AbortSignal): Promise<void> {
  const chainIds = [...options.readers.keys()];
  while (!signal.aborted) {
    try {
      const lease = await options.ranges.claim(chainIds, options.owner, options.leaseMs);
      if (!lease) {
        await pause(options.pollIntervalMs, signal);
        continue;
      }
      await workRange(options, lease, signal);
    } catch (error) {
      // A lost lease is expected after a pause past leaseMs; anything else (node, database) is retried.
      const code = error instanceof TenorError ? error.code : undefined;
      const what =
        code === LEDGER_INDEX_ERRORS.LEDGER_RANGE_LEASE_LOST
          ? "ledger range lease lost"
          : "ledger catch-up step failed";
      options.logger.warn(what, { code, error: (error as Error).message });
      await pause(options.pollIntervalMs, signal);
    }
  }
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

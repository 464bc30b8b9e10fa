import type { PublicClient } from "viem";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { ServiceLookup } from "../../src/engine/services.js";

/**
 * The record date as a block height (docs/corporate-actions.md, "Record date and snapshot"): the
 * last block whose timestamp is at or before the record date. It is only decided once a block
 * *after* the record date is settled under the chain's finality rule, so the answer cannot move
 * with a reorganisation or a late block.
 */
export interface RecordHeight {
  height: string;
  hash: string;
  /** Unix seconds of the record block. */
  timestamp: string;
}

/** The highest settled block under the chain's finality rule (`finalized` tag or depth). */
export async function settledBlock(
  services: ServiceLookup,
  chainId: number,
): Promise<{ number: bigint; timestamp: bigint }> {
  const chain = services.service(chainAccessService).chains.get(chainId);
  const client = chain.public as PublicClient;
  const finality = chain.config.finality;
  if (finality === "finalized") return client.getBlock({ blockTag: "finalized" });
  const head = await client.getBlockNumber();
  const settled = head + 1n - BigInt(Math.max(finality.depth, 1));
  return client.getBlock({ blockNumber: settled < 0n ? 0n : settled });
}

/** True once a settled block is later than `recordDate` (the record height can be decided). */
export async function recordDateSettled(
  services: ServiceLookup,
  chainId: number,
  recordDate: Date,
): Promise<boolean> {
  const settled = await settledBlock(services, chainId);
  return settled.timestamp * 1000n > BigInt(recordDate.getTime());
}

/**
 * Binary search over settled blocks for the last one at or before `recordDate`. Call only after
 * `recordDateSettled`; a record date before the chain's first block is height 0.
 */
export async function findRecordHeight(
  services: ServiceLookup,
  chainId: number,
  recordDate: Date,
): Promise<RecordHeight> {
  const client = services.service(chainAccessService).chains.get(chainId).public as PublicClient;
  const limit = BigInt(Math.floor(recordDate.getTime() / 1000));
  let low = 0n;
  let high = (await settledBlock(services, chainId)).number;
  while (low < high) {
    const mid = (low + high + 1n) / 2n;
    const block = await client.getBlock({ blockNumber: mid });
    if (block.timestamp <= limit) low = mid;
    else high = mid - 1n;
  }
  const block = await client.getBlock({ blockNumber: low });
  return { height: low.toString(), hash: block.hash, timestamp: block.timestamp.toString() };
}

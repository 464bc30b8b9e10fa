import { type Address, type Hex, type PublicClient, parseAbiItem } from "viem";
import type { ChainConfig } from "../config/chains-schema.js";
import type { LedgerBlock } from "../store/pg-ledger-index.js";
import type { Erc20TransferLog } from "../store/pg-ledger-transfers.js";

/** The ERC-20 Transfer event; its logs become the token read model. */
export const TRANSFER_EVENT = parseAbiItem(
  "event Transfer(address indexed from, address indexed to, uint256 value)",
);

/** Blocks read at once from the node while filling one batch. */
const BLOCK_READS_IN_FLIGHT = 16;

/** The node reads the Ledger Index makes: blocks, Transfer logs and the settled height. */
export class ChainReader {
  constructor(
    readonly client: PublicClient,
    private readonly finality: ChainConfig["finality"],
  ) {}

  async head(): Promise<LedgerBlock> {
    return toBlock(await this.client.getBlock({ blockTag: "latest" }));
  }

  async block(height: bigint): Promise<LedgerBlock> {
    return toBlock(await this.client.getBlock({ blockNumber: height }));
  }

  /** Blocks `from`..`to` inclusive, in height order. */
  async blocks(from: bigint, to: bigint): Promise<LedgerBlock[]> {
    const heights: bigint[] = [];
    for (let h = from; h <= to; h++) heights.push(h);
    const out: LedgerBlock[] = [];
    for (let i = 0; i < heights.length; i += BLOCK_READS_IN_FLIGHT) {
      out.push(...(await Promise.all(heights.slice(i, i + BLOCK_READS_IN_FLIGHT).map((h) => this.block(h)))));
    }
    return out;
  }

  /**
   * The highest settled block under the chain's finality rule: the node's `finalized` block, or
   * the newest block with `depth` blocks on top of it counting itself (the confirmation
   * watcher's rule), never above the head.
   */
  async settledHeight(head: LedgerBlock): Promise<bigint> {
    if (this.finality === "finalized") return (await this.client.getBlock({ blockTag: "finalized" })).number;
    const settled = head.height + 1n - BigInt(this.finality.depth);
    if (settled < 0n) return 0n;
    return settled > head.height ? head.height : settled;
  }

  /** Transfer logs of `addresses` in blocks `from`..`to`, in (blockNumber, logIndex) order. */
  async transfers(addresses: readonly string[], from: bigint, to: bigint): Promise<Erc20TransferLog[]> {
    if (addresses.length === 0) return [];
    const logs = await this.client.getLogs({
      address: addresses as Address[],
      event: TRANSFER_EVENT,
      fromBlock: from,
      toBlock: to,
      strict: true,
    });
    return logs
      .map((log) => ({
        blockNumber: log.blockNumber,
        logIndex: log.logIndex,
        blockHash: log.blockHash,
        txHash: log.transactionHash,
        token: log.address.toLowerCase(),
        from: (log.args.from as Hex).toLowerCase(),
        to: (log.args.to as Hex).toLowerCase(),
        value: log.args.value as bigint,
      }))
      .sort((a, b) =>
        a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
      );
  }
}

function toBlock(block: {
  number: bigint | null;
  hash: Hex | null;
  parentHash: Hex;
  timestamp: bigint;
}): LedgerBlock {
  return {
    height: block.number as bigint,
    hash: block.hash as Hex,
    parentHash: block.parentHash,
    time: new Date(Number(block.timestamp) * 1_000),
  };
}

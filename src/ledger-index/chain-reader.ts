import { BlockNotFoundError, type EIP1193RequestFn, type Hex, type Log, type PublicClient } from "viem";
import type { ChainConfig } from "../config/chains-schema.js";
import { chainAddress } from "../values/address.js";
import type { ChainBlock } from "./chain-block.js";
import { eventsOf, LEDGER_EVENTS, type RawLedgerLog, toLedgerLogs } from "./ledger-events.js";
import type { LedgerScopeKind } from "./ledger-scope.js";
import { checkLogsAnswer } from "./logs-check.js";
import type { LedgerBlock } from "./store/chain-checkpoint.js";
import type { LedgerLogs } from "./store/domain-logs.js";
import type { Erc20TransferLog } from "./store/transfers.js";

/** The ERC-20 Transfer event; its logs become the token read model. */
export const TRANSFER_EVENT = LEDGER_EVENTS.Transfer;

/** A contract to read logs for, and what it is to the index. */
export interface LogTarget {
  address: string;
  kind: LedgerScopeKind;
}

/** A block as the node serves it: what the tail stores, and the bloom its logs are checked against. */

/** What `eth_syncing` reports while the node syncs (heights as the node gives them). */
export interface NodeSyncing {
  currentBlock: bigint;
  highestBlock: bigint;
}

/** `eth_syncing`, which viem's public actions do not type: false, or the node's progress. */
type SyncingRequest = EIP1193RequestFn<
  [
    {
      Method: "eth_syncing";
      Parameters?: undefined;
      ReturnType: false | { currentBlock?: Hex; highestBlock?: Hex };
    },
  ]
>;

/** JSON-RPC's "method not found": the node does not offer the method. */
const METHOD_NOT_FOUND = -32601;

/** Blocks read at once from the node while filling one batch. */
const BLOCK_READS_IN_FLIGHT = 16;

/** The node reads the Ledger Index makes: blocks, Transfer logs and the settled height. */
export class ChainReader {
  constructor(
    readonly client: PublicClient,
    private readonly finality: ChainConfig["finality"],
  ) {}

  async head(): Promise<ChainBlock> {
    return toBlock(await this.client.getBlock({ blockTag: "latest" }));
  }

  /**
   * The node's block at `height`.
   *
   * @throws BlockNotFoundError (viem) when the node has no block there.
   */
  async block(height: bigint): Promise<ChainBlock> {
    return toBlock(await this.client.getBlock({ blockNumber: height }));
  }

  /**
   * The node's sync state (`eth_syncing`): its progress while it syncs, null when it says it does
   * not, or when it does not offer the method (the head checks then stand alone).
   */
  async syncing(): Promise<NodeSyncing | null> {
    let answer: unknown;
    try {
      answer = await (this.client.request as SyncingRequest)({ method: "eth_syncing" });
    } catch (error) {
      if (rpcCode(error) === METHOD_NOT_FOUND) return null;
      throw error;
    }
    if (answer === false || answer === null || typeof answer !== "object") return null;
    const progress = answer as { currentBlock?: Hex; highestBlock?: Hex };
    return {
      currentBlock: BigInt(progress.currentBlock ?? "0x0"),
      highestBlock: BigInt(progress.highestBlock ?? "0x0"),
    };
  }

  /** Blocks `from`..`to` inclusive, in height order. */
  async blocks(from: bigint, to: bigint): Promise<ChainBlock[]> {
    const heights: bigint[] = [];
    for (let h = from; h <= to; h++) heights.push(h);
    const out: ChainBlock[] = [];
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

  /**
   * The logs of `targets` in blocks `from`..`to`: one `eth_getLogs` with the contracts' addresses
   * and, as topic 0, the events of every kind among them (docs/ledger-index.md, "Decoding"),
   * decoded and in (blockNumber, logIndex) order. A contract may receive another kind's event of
   * a contract sharing the request; the store admits a log only for its emitter's own kind.
   * Unchecked: what is committed to the index is read with `checkedLogs`.
   */
  async logs(targets: readonly LogTarget[], from: bigint, to: bigint): Promise<LedgerLogs> {
    return toLedgerLogs((await this.rawLogs(targets, from, to)).logs);
  }

  /**
   * The logs of `targets` in `blocks` (consecutive, as this node served them), like `logs`, once
   * the answer is checked against the blocks' logs blooms and, for a block whose bloom matches
   * but that got no log, its receipts (docs/ledger-index.md, "A short eth_getLogs answer").
   *
   * @throws TenorError LEDGER_LOGS_UNVERIFIED (retryable) when the blocks do not confirm the answer.
   */
  async checkedLogs(targets: readonly LogTarget[], blocks: readonly ChainBlock[]): Promise<LedgerLogs> {
    const first = blocks[0];
    const last = blocks.at(-1);
    if (!first || !last) return toLedgerLogs([]);
    const answer = await this.rawLogs(targets, first.height, last.height);
    if (answer.addresses.length > 0 && answer.events.length > 0)
      await checkLogsAnswer({ chainId: this.client.chain?.id ?? 0, blocks, ...answer }, (block) =>
        this.receiptLogs(block),
      );
    return toLedgerLogs(answer.logs);
  }

  private async rawLogs(targets: readonly LogTarget[], from: bigint, to: bigint) {
    const events = eventsOf(new Set(targets.map((t) => t.kind)));
    const addresses = [
      ...new Set(targets.map((t) => chainAddress(t.address, "address").toLowerCase() as Hex)),
    ];
    if (addresses.length === 0 || events.length === 0) return { addresses, events, logs: [] };
    const raw = await this.client.getLogs({
      address: addresses,
      events,
      fromBlock: from,
      toBlock: to,
      strict: true,
    });
    return { addresses, events, logs: raw as unknown as RawLedgerLog[] };
  }

  /**
   * Every log of `block` from its receipts, by the block's hash: `eth_getBlockReceipts`, or one
   * `eth_getTransactionReceipt` per transaction from a node that does not offer it.
   */
  async receiptLogs(block: ChainBlock): Promise<Log[]> {
    try {
      const receipts = await this.client.getBlockReceipts({ blockHash: block.hash as Hex });
      return receipts.flatMap((receipt) => receipt.logs);
    } catch (error) {
      if (rpcCode(error) !== METHOD_NOT_FOUND) throw error;
    }
    const { transactions } = await this.client.getBlock({ blockHash: block.hash as Hex });
    const receipts = await Promise.all(
      transactions.map((hash) => this.client.getTransactionReceipt({ hash })),
    );
    return receipts.flatMap((receipt) => receipt.logs);
  }

  /** Transfer logs of `addresses` in blocks `from`..`to`, in (blockNumber, logIndex) order. */
  async transfers(addresses: readonly string[], from: bigint, to: bigint): Promise<Erc20TransferLog[]> {
    const targets = addresses.map((address) => ({ address, kind: "erc20" as const }));
    return (await this.logs(targets, from, to)).transfers;
  }
}

function toBlock(block: {
  number: bigint | null;
  hash: Hex | null;
  parentHash: Hex;
  timestamp: bigint;
  logsBloom: Hex | null;
}): ChainBlock {
  return {
    height: block.number as bigint,
    hash: block.hash as Hex,
    parentHash: block.parentHash,
    time: new Date(Number(block.timestamp) * 1_000),
    logsBloom: block.logsBloom ?? "0x",
  };
}

/** The JSON-RPC error code somewhere in a viem error's cause chain, if any. */
function rpcCode(error: unknown): number | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.code === "number") return e.code;
  }
  return undefined;
}

/** True when the node said it has no block at a height it was asked for. */
export function isBlockNotFound(error: unknown): boolean {
  return error instanceof BlockNotFoundError;
}

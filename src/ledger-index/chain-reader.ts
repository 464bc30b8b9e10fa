import { BlockNotFoundError, type EIP1193RequestFn, type Hex, type PublicClient } from "viem";
import type { ChainConfig } from "../config/chains-schema.js";
import { chainAddress } from "../values/address.js";
import { eventsOf, LEDGER_EVENTS, type RawLedgerLog, toLedgerLogs } from "./ledger-events.js";
import type { LedgerScopeKind } from "./ledger-scope.js";
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
export interface ChainBlock extends LedgerBlock {
  /** The header's 256-byte logs bloom: every log's address and topics are in it. */
  logsBloom: Hex;
}

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
   */
  async logs(targets: readonly LogTarget[], from: bigint, to: bigint): Promise<LedgerLogs> {
    const events = eventsOf(new Set(targets.map((t) => t.kind)));
    const addresses = [...new Set(targets.map((t) => t.address))];
    if (addresses.length === 0 || events.length === 0) return toLedgerLogs([]);
    const raw = await this.client.getLogs({
      address: addresses.map((address) => chainAddress(address, "address")),
      events,
      fromBlock: from,
      toBlock: to,
      strict: true,
    });
    return toLedgerLogs(raw as unknown as RawLedgerLog[]);
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

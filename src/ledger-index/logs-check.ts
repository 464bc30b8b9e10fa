import { type AbiEvent, type Hex, type Log, parseEventLogs, toEventSelector } from "viem";
import { LEDGER_INDEX_ERRORS } from "../errors/ledger-index-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import { addressText } from "../values/address.js";
import type { ChainBlock } from "./chain-block.js";
import type { RawLedgerLog } from "./ledger-events.js";
import { bloomMayContain, bloomMayHoldAny } from "./logs-bloom.js";

/** One `eth_getLogs` answer and what it was asked for. */
export interface LogsAnswer {
  chainId: number;
  /** The blocks the request covered, consecutive, as the node served their headers. */
  blocks: readonly ChainBlock[];
  /** The request's contract addresses (lowercase) and events (topic 0 alternatives). */
  addresses: readonly Hex[];
  events: readonly AbiEvent[];
  logs: readonly RawLedgerLog[];
}

/** Reads every log of one block from its receipts (the node's receipts of exactly that block hash). */
export type ReceiptLogs = (block: ChainBlock) => Promise<Log[]>;

/**
 * Checks an `eth_getLogs` answer against what its blocks commit to before any of it is committed
 * (docs/ledger-index.md, "A short eth_getLogs answer"), because providers have answered 200 with
 * logs missing:
 *
 * - every log must belong to one of the blocks (same hash) and have its address and topics in
 *   that block's logs bloom;
 * - a block that got no log but whose bloom may hold one of the addresses and one of the events
 *   is read from its receipts, and must indeed hold no log the request selects.
 *
 * Costs no call on the normal path (the headers are read anyway); one receipts read per block
 * whose bloom matches and that got nothing.
 *
 * @throws TenorError LEDGER_LOGS_UNVERIFIED (retryable) naming the block and what is wrong; the
 *   caller reads the range again and commits nothing of this answer.
 */
export async function checkLogsAnswer(answer: LogsAnswer, receiptLogs: ReceiptLogs): Promise<void> {
  const byHeight = new Map(answer.blocks.map((block) => [block.height, block]));
  const answered = new Set<bigint>();
  for (const log of answer.logs) {
    const block = byHeight.get(log.blockNumber);
    if (!block || block.hash !== log.blockHash)
      throw unverified(
        answer,
        log.blockNumber,
        "a log came from another block than the one read (the chain moved)",
      );
    const items = [log.address, ...log.topics];
    if (!items.every((item) => bloomMayContain(block.logsBloom, item)))
      throw unverified(answer, log.blockNumber, `log ${log.logIndex} is not in the block's logs bloom`);
    answered.add(log.blockNumber);
  }
  const topics = answer.events.map((event) => toEventSelector(event));
  for (const block of answer.blocks) {
    if (answered.has(block.height) || !bloomMayHoldAny(block.logsBloom, answer.addresses, topics)) continue;
    const held = selected(answer, await receiptLogs(block));
    if (held > 0)
      throw unverified(
        answer,
        block.height,
        `the block's receipts hold ${held} log(s) the request selects and eth_getLogs returned none`,
      );
  }
}

/** How many of a block's receipt logs the request selects (its addresses, its events, decodable). */
function selected(answer: LogsAnswer, logs: readonly Log[]): number {
  const addresses = new Set(answer.addresses);
  const ours = logs.filter((log) => addresses.has(addressText(log.address) as Hex));
  return parseEventLogs({ abi: answer.events, logs: ours, strict: true }).length;
}

function unverified(answer: LogsAnswer, height: bigint, what: string): TenorError {
  return new TenorError(
    LEDGER_INDEX_ERRORS.LEDGER_LOGS_UNVERIFIED,
    `chain ${answer.chainId}, block ${height}: the node's eth_getLogs answer does not match the block: ${what}`,
    { retryable: true, details: { chainId: answer.chainId, block: height.toString() } },
  );
}

/** True for an eth_getLogs answer the blocks do not confirm: read the range again. */
export function isUnverifiedLogs(error: unknown): error is TenorError {
  return error instanceof TenorError && error.code === LEDGER_INDEX_ERRORS.LEDGER_LOGS_UNVERIFIED;
}

import type { Hex } from "viem";
import type { LedgerBlock } from "./store/chain-checkpoint.js";

/** A block as the chain reader reads it: the index's block and the header's logs bloom. */
export interface ChainBlock extends LedgerBlock {
  /** The header's 256-byte logs bloom: every log's address and topics are in it. */
  logsBloom: Hex;
}

import { type Hex, hexToBytes, keccak256 } from "viem";

/** Bytes in a block header's logs bloom (2048 bits). */
const BLOOM_BYTES = 256;

/**
 * True when `item` (a log's address, or one of its topics) may be in a block's logs bloom: the
 * three bits Ethereum sets for it (the low 11 bits of the first three byte pairs of its keccak-256
 * hash) are all set. False means the block holds no log with it; true may be a false positive.
 * A bloom that is not 256 bytes (a node that leaves it out) answers true: it proves nothing.
 */
export function bloomMayContain(bloom: Hex, item: Hex): boolean {
  const bits = hexToBytes(bloom);
  if (bits.length !== BLOOM_BYTES) return true;
  const hash = hexToBytes(keccak256(item));
  for (let i = 0; i < 6; i += 2) {
    const bit = (((hash[i] as number) << 8) | (hash[i + 1] as number)) & 0x7ff;
    const byte = bits[BLOOM_BYTES - 1 - (bit >> 3)] as number;
    if ((byte & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

/** True when the bloom may hold a log of any of `addresses` and, separately, any of `topics`. */
export function bloomMayHoldAny(bloom: Hex, addresses: readonly Hex[], topics: readonly Hex[]): boolean {
  return (
    addresses.some((address) => bloomMayContain(bloom, address)) &&
    topics.some((topic) => bloomMayContain(bloom, topic))
  );
}

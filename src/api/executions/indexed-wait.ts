/**
 * Read-after-write for `Prefer: wait` (docs/ledger-index.md, "Read-after-write"). A finished
 * execution reports a chain write when its output carries `blockNumber` (a decimal string or a
 * non-negative integer) and a chain id: the output's own `chainId`, or else its input's (as
 * `chain.transaction` does: the chain is in the request, the block in the result). The API then
 * answers only once the Ledger Index has that block, within the same wait budget.
 */
export interface ChainWrite {
  chainId: number;
  blockNumber: bigint;
}

/** Poll period of the indexed height while a response waits for it, in ms: one indexed row read. */
const INDEXED_POLL_MS = 100;

/** The chain write `output` reports (see above), or null when it reports none. */
export function chainWriteOf(output: unknown, input: unknown): ChainWrite | null {
  if (!isObject(output)) return null;
  const block = output.blockNumber;
  let blockNumber: bigint;
  if (typeof block === "string" && /^\d{1,30}$/.test(block)) blockNumber = BigInt(block);
  else if (typeof block === "number" && Number.isSafeInteger(block) && block >= 0)
    blockNumber = BigInt(block);
  else return null;
  const chainId = output.chainId ?? (isObject(input) ? input.chainId : undefined);
  if (typeof chainId !== "number" || !Number.isSafeInteger(chainId) || chainId < 1) return null;
  return { chainId, blockNumber };
}

/**
 * Polls `indexedHeight` until it reaches the write's block or `deadline` (epoch ms) passes.
 * Resolves whether the block is indexed; never throws for a failed read (it counts as not yet).
 */
export async function waitUntilIndexed(
  indexedHeight: (chainId: number) => Promise<bigint | null>,
  write: ChainWrite,
  deadline: number,
): Promise<boolean> {
  for (;;) {
    const height = await indexedHeight(write.chainId).catch(() => null);
    if (height !== null && height >= write.blockNumber) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(INDEXED_POLL_MS, left)));
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

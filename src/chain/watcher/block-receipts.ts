import {
  BaseError,
  BlockNotFoundError,
  type Hex,
  MethodNotFoundRpcError,
  MethodNotSupportedRpcError,
  type PublicClient,
  TransactionReceiptNotFoundError,
} from "viem";

/** One block the watcher follows: its place in the chain and the transactions it holds. */
export interface FollowedBlock {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  transactions: readonly Hex[];
}

/** What the watcher keeps of a transaction seen in a followed block. */
export interface SeenTransaction {
  blockNumber: bigint;
  blockHash: Hex;
  /** The receipt's status; undefined when the receipt was not read (not a hash anyone waited on). */
  status?: "success" | "reverted";
}

/**
 * How a chain's receipts are read per block. `auto` tries `eth_getBlockReceipts` once and settles
 * on `block` (one call per block) or, when the node does not offer the method, `perHash`.
 */
export type ReceiptMode = "auto" | "block" | "perHash";

/** The receipts of one block, or `unavailable` when the node has not got them (yet). */
export type BlockReceipts =
  | { kind: "read"; mode: Exclude<ReceiptMode, "auto">; seen: Map<Hex, SeenTransaction> }
  | { kind: "unavailable" };

/** A followed block's header and transaction hashes, or null when the node does not know it. */
export async function readBlock(client: PublicClient, at: bigint | "latest"): Promise<FollowedBlock | null> {
  const block = await client
    .getBlock(at === "latest" ? { blockTag: "latest" } : { blockNumber: at })
    .catch((error: unknown) => {
      if (error instanceof BlockNotFoundError) return null;
      throw error;
    });
  if (!block || block.number === null || block.hash === null) return null;
  return {
    number: block.number,
    hash: block.hash,
    parentHash: block.parentHash,
    transactions: block.transactions,
  };
}

/**
 * Reads what the watcher needs of `block`'s transactions. With `eth_getBlockReceipts` (asked by
 * the block's hash, so the receipts belong to exactly that block) every transaction comes with
 * its status in one call; otherwise every transaction is recorded from the block's list and
 * receipts are read only for the hashes in `waited`. A node that answers without the receipts
 * of a transaction the block holds (a load-balanced provider whose other node lags) makes the
 * block `unavailable`: the watcher stops before it and reads it again next tick.
 */
export async function readBlockReceipts(
  client: PublicClient,
  block: FollowedBlock,
  mode: ReceiptMode,
  waited: ReadonlySet<Hex>,
): Promise<BlockReceipts> {
  if (mode !== "perHash") {
    const receipts = await blockReceipts(client, block.hash, mode === "auto");
    if (receipts !== "notOffered") {
      if (receipts === null || receipts.length !== block.transactions.length) return { kind: "unavailable" };
      const seen = new Map<Hex, SeenTransaction>();
      for (const r of receipts) {
        if (r.blockHash !== block.hash) return { kind: "unavailable" };
        seen.set(r.transactionHash, {
          blockNumber: block.number,
          blockHash: block.hash,
          status: r.status === "0x1" ? "success" : "reverted",
        });
      }
      return { kind: "read", mode: "block", seen };
    }
  }
  const seen = new Map<Hex, SeenTransaction>();
  for (const hash of block.transactions) seen.set(hash, { blockNumber: block.number, blockHash: block.hash });
  const ours = block.transactions.filter((hash) => waited.has(hash));
  const statuses = await Promise.all(ours.map((hash) => receiptStatus(client, hash, block.hash)));
  if (statuses.some((s) => s === undefined)) return { kind: "unavailable" };
  ours.forEach((hash, i) => {
    seen.set(hash, { blockNumber: block.number, blockHash: block.hash, status: statuses[i] });
  });
  return { kind: "read", mode: "perHash", seen };
}

interface RawReceipt {
  transactionHash: Hex;
  blockHash: Hex;
  status: Hex;
}

/** `eth_getBlockReceipts`, or `notOffered` when `probing` and the node does not have the method. */
async function blockReceipts(
  client: PublicClient,
  blockHash: Hex,
  probing: boolean,
): Promise<RawReceipt[] | null | "notOffered"> {
  try {
    // viem has no action for the method; its JSON-RPC schema does not list it either.
    const request = client.request as unknown as (args: {
      method: "eth_getBlockReceipts";
      params: [Hex];
    }) => Promise<RawReceipt[] | null>;
    return await request({ method: "eth_getBlockReceipts", params: [blockHash] });
  } catch (error) {
    if (probing && notOffered(error)) return "notOffered";
    throw error;
  }
}

function notOffered(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk((e) => e instanceof MethodNotFoundRpcError || e instanceof MethodNotSupportedRpcError) !== null
  );
}

/** A receipt's status, when the node holds it in block `blockHash`; undefined otherwise. */
async function receiptStatus(
  client: PublicClient,
  hash: Hex,
  blockHash: Hex,
): Promise<"success" | "reverted" | undefined> {
  const receipt = await receiptOf(client, hash);
  return receipt && receipt.blockHash === blockHash ? receipt.status : undefined;
}

/** One transaction's receipt, or undefined when the node has none. */
export async function receiptOf(client: PublicClient, hash: Hex) {
  try {
    return await client.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return undefined;
    throw error;
  }
}

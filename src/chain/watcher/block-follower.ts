import type { Hex, PublicClient } from "viem";
import {
  type FollowedBlock,
  type ReceiptMode,
  readBlock,
  readBlockReceipts,
  type SeenTransaction,
} from "./block-receipts.js";

/**
 * Most new blocks one tick follows. A head further ahead (the watcher was down, or fell behind)
 * is not walked: the follower starts again at the head and every waiting hash gets one receipt
 * read of its own, which costs less than reading hundreds of blocks for a few waits.
 */
const MAX_BLOCKS_PER_TICK = 128;

/**
 * Blocks whose hash and transactions are remembered, behind the newest followed one. Finality
 * waits on a block in this window are decided without a call; one further back is read by hash.
 */
const WINDOW = 256;

/** Blocks read at once while catching up. */
const PARALLEL = 16;

/**
 * Follows one chain's blocks for the confirmation watcher (docs/chains.md, "Confirmation
 * watcher"): each tick it reads the blocks that are new since the last one, keeps which
 * transactions they hold (with their receipts' status where read), and notices a reorg by a
 * block whose parent is not the block it followed at that height. It also remembers which hashes
 * already had a receipt read of their own since it has been following without a break, so a hash
 * is read alone at most once: after that, only a followed block can settle it.
 */
export class BlockFollower {
  private readonly hashes = new Map<bigint, Hex>();
  private readonly transactions = new Map<Hex, SeenTransaction>();
  private readonly holds = new Map<bigint, Hex[]>();
  private readonly checked = new Set<Hex>();
  private cursor: bigint | null = null;
  private mode: ReceiptMode = "auto";

  /** How receipts are read on this chain, once the first block has told. */
  get receiptMode(): ReceiptMode {
    return this.mode;
  }

  /**
   * Reads the new blocks up to the node's head, which it returns. `waited` are the hashes the
   * watcher waits on now (whose receipts are read when the node has no block receipts).
   */
  async advance(client: PublicClient, waited: ReadonlySet<Hex>): Promise<bigint> {
    const latest = await readBlock(client, "latest");
    if (!latest) throw new Error("the node answered no latest block");
    if (this.cursor !== null && latest.number <= this.cursor) {
      if (this.hashes.get(latest.number) !== latest.hash) await this.rewind(client);
      if (this.cursor !== null && latest.number <= this.cursor) return latest.number;
    }
    if (this.cursor !== null && latest.number - this.cursor > MAX_BLOCKS_PER_TICK) this.loseTrack();
    let next = this.cursor === null ? latest.number : this.cursor + 1n;
    while (next <= latest.number) {
      const last = next + BigInt(this.mode === "auto" ? 1 : PARALLEL) - 1n;
      const upTo = last < latest.number ? last : latest.number;
      const read = await this.readRange(client, next, upTo, latest, waited);
      if (!(await this.take(client, read))) break;
      next = upTo + 1n;
    }
    return latest.number;
  }

  /** The transaction `hash` as seen in a followed block, if it was. */
  seen(hash: Hex): SeenTransaction | undefined {
    return this.transactions.get(hash);
  }

  /**
   * The hash of the followed block at `height`: `undefined` when that height is outside what is
   * followed (not reached yet, behind the window, or followed before a break).
   */
  blockAt(height: bigint): Hex | undefined {
    return this.hashes.get(height);
  }

  /** True when `hash` has had a receipt read of its own since the follower last lost track. */
  wasChecked(hash: Hex): boolean {
    return this.checked.has(hash);
  }

  markChecked(hash: Hex): void {
    this.checked.add(hash);
  }

  /** Forgets the checks of hashes nobody waits on any more. */
  keepChecked(waited: ReadonlySet<Hex>): void {
    for (const hash of this.checked) if (!waited.has(hash)) this.checked.delete(hash);
  }

  private async readRange(
    client: PublicClient,
    from: bigint,
    to: bigint,
    latest: FollowedBlock,
    waited: ReadonlySet<Hex>,
  ) {
    const heights: bigint[] = [];
    for (let h = from; h <= to; h++) heights.push(h);
    return Promise.all(
      heights.map(async (height) => {
        const block = height === latest.number ? latest : await readBlock(client, height);
        const receipts = block ? await readBlockReceipts(client, block, this.mode, waited) : undefined;
        return { block, receipts };
      }),
    );
  }

  /** Records blocks in order; false when it had to stop (a reorg, a block not available yet). */
  private async take(
    client: PublicClient,
    read: Awaited<ReturnType<BlockFollower["readRange"]>>,
  ): Promise<boolean> {
    for (const { block, receipts } of read) {
      if (!block || !receipts || receipts.kind === "unavailable") return false;
      const parent = this.hashes.get(block.number - 1n);
      if (this.cursor !== null && parent !== undefined && parent !== block.parentHash) {
        await this.rewind(client);
        return false;
      }
      this.mode = receipts.mode;
      this.hashes.set(block.number, block.hash);
      this.holds.set(block.number, [...receipts.seen.keys()]);
      for (const [hash, seen] of receipts.seen) this.transactions.set(hash, seen);
      this.cursor = block.number;
      this.forget(block.number - BigInt(WINDOW));
    }
    return true;
  }

  /** Drops followed blocks from the top until the one at the top is still the node's. */
  private async rewind(client: PublicClient): Promise<void> {
    while (this.cursor !== null) {
      const canonical = await readBlock(client, this.cursor);
      if (canonical && canonical.hash === this.hashes.get(this.cursor)) return;
      this.drop(this.cursor);
      this.cursor = this.hashes.has(this.cursor - 1n) ? this.cursor - 1n : null;
    }
    // The whole window was replaced: whatever the follower knew is no longer the chain.
    this.loseTrack();
  }

  /** Starts again at the next head: every waiting hash gets a read of its own once more. */
  private loseTrack(): void {
    for (const height of [...this.hashes.keys()]) this.drop(height);
    this.checked.clear();
    this.cursor = null;
  }

  private forget(below: bigint): void {
    for (const height of this.hashes.keys()) if (height < below) this.drop(height);
  }

  private drop(height: bigint): void {
    for (const hash of this.holds.get(height) ?? []) {
      if (this.transactions.get(hash)?.blockHash === this.hashes.get(height)) this.transactions.delete(hash);
    }
    this.holds.delete(height);
    this.hashes.delete(height);
  }
}

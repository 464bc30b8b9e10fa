import { createWalletClient, type Hex, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainTransaction } from "../../src/chain/lifecycle/transaction-workflow.js";
import { listChainWaits } from "../../src/chain/store/chain-watch-sql.js";
import { BlockFollower } from "../../src/chain/watcher/block-follower.js";
import { type ConfirmationWatcherOptions, watchOnce } from "../../src/chain/watcher/confirmation-watcher.js";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { METHOD_NOT_FOUND, type RpcCall } from "../support/rpc-proxy.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * The confirmation watcher settles waits from the blocks it follows (docs/chains.md,
 * "Confirmation watcher"), counted at the JSON-RPC proxy between the world and anvil. Anvil mines
 * only when told (automine off), finality is 2 blocks deep, and no watcher runs on its own: each
 * test drives ticks with a follower of its own, as one watcher process would.
 */

let world: ChainWorld;
let options: ConfirmationWatcherOptions;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    anvil: { automine: false },
    chain: { finality: { depth: 2 } },
    rpcProxy: true,
    watcher: false,
  });
  options = {
    pool: world.engine.pool,
    executions: world.engine.client,
    chains: world.chains,
    owns: () => true,
    logger: world.engine.logger,
  };
});
afterAll(async () => {
  await world?.stop();
});

const tick = (follower: BlockFollower) => watchOnce(options, world.chains.get(world.anvil.chainId), follower);

const waitingOn = (stage: string) => (v: ExecutionView) =>
  v.status === "waiting" && v.waitingFor?.[0]?.kind === "confirmation" && v.waitingFor[0].name === stage;

/** Starts `count` transfers and returns them once each waits for inclusion, with their hashes. */
async function waitingForInclusion(count: number): Promise<{ ids: string[]; hashes: Hex[] }> {
  const ids = await Promise.all(
    Array.from({ length: count }, (_, i) => world.send({ to: recipient, valueWei: String(i + 1) })),
  );
  const views = await Promise.all(
    ids.map((id) => world.engine.waitForView(id, waitingOn("inclusion"), "inclusion")),
  );
  return {
    ids,
    hashes: views.map((v) => (v.waitingFor?.[0]?.details?.hashes as Hex[] | undefined)?.[0] as Hex),
  };
}

const reachAll = (ids: string[], stage: string) =>
  Promise.all(ids.map((id) => world.engine.waitForView(id, waitingOn(stage), stage)));

/** The proxy's calls from `mark` on. */
const since = (mark: number): RpcCall[] => (world.proxy?.calls() ?? []).slice(mark);
const mark = (): number => world.proxy?.calls().length ?? 0;
const receiptReads = (calls: RpcCall[], hashes: readonly Hex[]) =>
  calls.filter((c) => c.method === "eth_getTransactionReceipt" && hashes.includes(c.params[0] as Hex)).length;
const ofMethod = (calls: RpcCall[], method: string) => calls.filter((c) => c.method === method);

async function expectConfirmed(ids: string[]): Promise<void> {
  for (const id of ids) expect((await world.settled(id)).output).toMatchObject({ verdict: "confirmed" });
}

describe("receipts by block", () => {
  it("settles every waiting hash of a new block in one pass: one block receipts call, no receipt of its own, one signal statement", async () => {
    const follower = new BlockFollower();
    const { ids, hashes } = await waitingForInclusion(8);
    await tick(follower);
    // Seen first while the follower had no block holding them: each hash is read alone, once.
    expect(receiptReads(since(0), hashes)).toBe(8);
    expect(follower.receiptMode).toBe("block");

    await world.anvil.mine(1);
    const block = await world.anvil.public.getBlock();
    expect(block.transactions).toHaveLength(8);
    const at = mark();
    expect(await tick(follower)).toBe(8);
    expect(receiptReads(since(at), hashes)).toBe(0);
    expect(ofMethod(since(at), "eth_getBlockReceipts").map((c) => c.params[0])).toEqual([block.hash]);
    const { rows } = await world.engine.pool.query<{ n: number; at: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT created_at)::int AS at FROM signals
       WHERE execution_id = ANY($1::uuid[]) AND name LIKE 'inclusion:%'`,
      [ids],
    );
    expect(rows[0]).toEqual({ n: 8, at: 1 });

    await reachAll(ids, "finality");
    await world.anvil.mine(1);
    const final = mark();
    expect(await tick(follower)).toBe(8);
    // The statuses came with the block's receipts: finality costs no receipt read either.
    expect(receiptReads(since(final), hashes)).toBe(0);
    await expectConfirmed(ids);
  });

  it("reads a hash mined before the watcher followed (a restart, or blocks skipped while it was down) on its own", async () => {
    const { ids, hashes } = await waitingForInclusion(3);
    await world.anvil.mine(2);
    const restarted = new BlockFollower();
    const at = mark();
    expect(await tick(restarted)).toBe(3);
    expect(receiptReads(since(at), hashes)).toBe(3);
    await reachAll(ids, "finality");
    // The included block is behind what this follower has seen: its finality is read by hash.
    const final = mark();
    expect(await tick(restarted)).toBe(3);
    expect(receiptReads(since(final), hashes)).toBe(3);
    await expectConfirmed(ids);

    // A follower that fell more than a tick's worth of blocks behind starts again at the head and
    // reads each waiting hash once more, even one it had read before the gap.
    const behind = new BlockFollower();
    const late = await waitingForInclusion(2);
    await tick(behind);
    await world.anvil.mine(200);
    const after = mark();
    expect(await tick(behind)).toBe(2);
    expect(receiptReads(since(after), late.hashes)).toBe(2);
    await reachAll(late.ids, "finality");
    expect(await tick(behind)).toBe(2);
    await expectConfirmed(late.ids);
  });

  it("on a node without eth_getBlockReceipts, reads the block's hashes and receipts only of the hashes it waits on", async () => {
    const refusal = world.proxy?.on("eth_getBlockReceipts", { error: METHOD_NOT_FOUND });
    try {
      const follower = new BlockFollower();
      const { ids, hashes } = await waitingForInclusion(3);
      await tick(follower);
      expect(follower.receiptMode).toBe("perHash");
      expect(refusal?.taken).toBe(1);
      // A transfer nobody here waits on shares the block.
      const other = createWalletClient({
        account: privateKeyToAccount(ANVIL_KEYS[5]),
        chain: { ...foundry, id: world.anvil.chainId },
        transport: http(world.anvil.url),
      });
      const stranger = await other.sendTransaction({ to: recipient, value: parseEther("0.001") });
      await world.anvil.mine(1);
      expect((await world.anvil.public.getBlock()).transactions).toHaveLength(4);
      const at = mark();
      expect(await tick(follower)).toBe(3);
      expect(receiptReads(since(at), hashes)).toBe(3);
      expect(receiptReads(since(at), [stranger])).toBe(0);
      expect(refusal?.taken).toBe(1);
      await reachAll(ids, "finality");
      await world.anvil.mine(1);
      const final = mark();
      expect(await tick(follower)).toBe(3);
      expect(receiptReads(since(final), hashes)).toBe(0);
      await expectConfirmed(ids);
    } finally {
      refusal?.remove();
    }
  });

  it("reads a block again next tick when the node answers it without its receipts", async () => {
    const follower = new BlockFollower();
    const { ids } = await waitingForInclusion(2);
    await tick(follower);
    const empty = world.proxy?.on("eth_getBlockReceipts", { result: [] }, { times: 1 });
    await world.anvil.mine(1);
    expect(await tick(follower)).toBe(0);
    expect(empty?.taken).toBe(1);
    expect(await tick(follower)).toBe(2);
    await reachAll(ids, "finality");
    await world.anvil.mine(1);
    expect(await tick(follower)).toBe(2);
    await expectConfirmed(ids);
  });

  it("notices a reorg of a block whose receipts it read, without reading a receipt, and settles the re-mined transactions", async () => {
    const follower = new BlockFollower();
    const { ids, hashes } = await waitingForInclusion(2);
    await tick(follower);
    await world.anvil.mine(1);
    expect(await tick(follower)).toBe(2);
    await reachAll(ids, "finality");
    // The block holding both receipts is replaced by an empty one at the same height.
    await world.anvil.test.request({ method: "anvil_reorg", params: [1, []] } as never);
    const at = mark();
    expect(await tick(follower)).toBe(2);
    expect(receiptReads(since(at), hashes)).toBe(0);
    await reachAll(ids, "inclusion");
    await world.anvil.mine(1);
    expect(await tick(follower)).toBe(2);
    await reachAll(ids, "finality");
    await world.anvil.mine(1);
    expect(await tick(follower)).toBe(2);
    await expectConfirmed(ids);
  });

  // Last in the file: it leaves its transfer parked with its signal stored.
  it("no longer lists a wait whose signal is stored, so a busy runner's backlog does not crowd newer waits out of a tick", async () => {
    const { ids, hashes } = await waitingForInclusion(1);
    const [id, hash] = [ids[0] as string, hashes[0] as Hex];
    const listed = () => listChainWaits(world.engine.pool, chainTransaction.name, world.anvil.chainId, 500);
    expect((await listed()).map((w) => w.executionId)).toContain(id);
    const view = await world.engine.client.view(id);
    // Stored without a wake, as a delivery whose execution's turn has not come yet.
    await world.engine.pool.query(
      "INSERT INTO signals (execution_id, name, payload, idempotency_key) VALUES ($1, $2, $3::jsonb, $4)",
      [
        id,
        view.waitingFor?.[0]?.details?.signal,
        JSON.stringify({ hash, blockNumber: "1", blockHash: hash }),
        "test",
      ],
    );
    expect((await listed()).map((w) => w.executionId)).not.toContain(id);
  });
});

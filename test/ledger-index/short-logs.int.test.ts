import { type Hex, numberToHex, toEventSelector } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEDGER_EVENTS } from "../../src/ledger-index/ledger-events.js";
import { tailStep } from "../../src/ledger-index/live-tail.js";
import { bloomMayContain } from "../../src/ledger-index/logs-bloom.js";
import type { ShardFence } from "../../src/ownership/store/shard-fence.js";
import type { Anvil } from "../support/anvil.js";
import type { TestDatabase } from "../support/database.js";
import { METHOD_NOT_FOUND, type RpcParams, type RpcProxy } from "../support/rpc-proxy.js";
import { type IndexedToken, startIndexedToken } from "./support/indexed-token.js";
import { balancesFromNode, dumpIndex, type LedgerDriver, mintSome } from "./support/ledger-world.js";

/**
 * A short eth_getLogs answer (docs/ledger-index.md, "A short eth_getLogs answer"): a real anvil
 * behind the JSON-RPC fault proxy, which drops a log from an answer (HTTP 200, as providers have
 * done) or moves one to another block. The answer is checked against the blocks' logs blooms and
 * receipts before anything is committed: the catch-up range and the tail's batch are read again,
 * and the index ends exactly the node's.
 */

const SETTINGS = { batchBlocks: 7, rangeBlocks: 20, depth: 12 };
let world: IndexedToken;
let anvil: Anvil;
let proxy: RpcProxy;
let db: TestDatabase;
let fence: ShardFence;
let token: `0x${string}`;
let deployedAt: bigint;
let driver: LedgerDriver;

beforeAll(async () => {
  world = await startIndexedToken({ settings: SETTINGS, mints: 20, shardOwner: "tail", proxy: true });
  ({ anvil, db, token, deployedAt, driver, fence } = world);
  proxy = world.proxy as RpcProxy;
});

afterAll(async () => {
  await world?.stop();
});

interface JsonLog {
  blockNumber: Hex;
  blockHash: Hex;
  logIndex: Hex;
}

/** True when an eth_getLogs call's range covers `height`. */
const covers = (height: bigint) => (params: RpcParams) => {
  const filter = params[0] as { fromBlock: Hex; toBlock: Hex };
  return BigInt(filter.fromBlock) <= height && height <= BigInt(filter.toBlock);
};

/** Answers the next eth_getLogs covering `height` without that block's logs (a short 200 answer). */
function dropLogsOf(height: bigint) {
  return proxy.on(
    "eth_getLogs",
    { rewrite: (result) => (result as JsonLog[]).filter((log) => BigInt(log.blockNumber) !== height) },
    { when: covers(height), times: 1 },
  );
}

async function checkpoint(): Promise<bigint> {
  return ((await driver.tail.index.cursor(anvil.chainId)) as { height: bigint }).height;
}

/** The index holds exactly the node's Transfer logs, each once, at their blocks, with the node's balances. */
async function expectIndexIsTheNodes(): Promise<void> {
  const node = await balancesFromNode(anvil, token);
  const index = await dumpIndex(db.pool, anvil.chainId);
  expect(index.transfers).toHaveLength(node.logs);
  const logs = await anvil.public.getLogs({ address: token, fromBlock: 0n, toBlock: "latest" });
  const key = (block: unknown, logIndex: unknown, hash: unknown) => `${block}:${logIndex}:${hash}`;
  expect(index.transfers.map((t) => key(t.block_number, t.log_index, t.block_hash)).sort()).toEqual(
    logs.map((l) => key(l.blockNumber, l.logIndex, l.blockHash)).sort(),
  );
  expect(Object.fromEntries(index.balances.map((b) => [b.holder, b.balance]))).toEqual(
    Object.fromEntries([...node.balances].map(([h, v]) => [h, v.toString()])),
  );
}

describe("a short eth_getLogs answer", () => {
  it("in a catch-up range: the chunk is read again and the range completes with every log", async () => {
    const target = deployedAt + 3n;
    const rule = dropLogsOf(target);
    await driver.catchUp(fence);
    expect(rule.taken).toBe(1);
    expect(proxy.calls("eth_getLogs").filter((call) => covers(target)(call.params)).length).toBeGreaterThan(
      1,
    );
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS open FROM ledger_ranges WHERE chain_id = $1 AND completed_at IS NULL",
      [anvil.chainId],
    );
    expect(rows[0].open).toBe(0);
    await expectIndexIsTheNodes();
  });

  it("in a live-tail batch: the batch is refused before commit, read again, and the index ends exact", async () => {
    const indexed = await checkpoint();
    await mintSome(anvil, token, 5, 1);
    const rule = dropLogsOf(indexed + 3n);
    const step = await tailStep(driver.tail, fence);
    expect(step).toMatchObject({ kind: "retry" });
    expect(step.kind === "retry" && step.reason).toMatch(
      new RegExp(
        `block ${indexed + 3n}: .*receipts hold 1 log\\(s\\) the request selects and eth_getLogs returned none`,
      ),
    );
    expect(rule.taken).toBe(1);
    expect(await checkpoint()).toBe(indexed);
    await driver.catchUp(fence);
    await expectIndexIsTheNodes();
  });

  it("from a node without eth_getBlockReceipts: checked against each transaction's receipt", async () => {
    const indexed = await checkpoint();
    await mintSome(anvil, token, 3, 2);
    proxy.on("eth_getBlockReceipts", { error: METHOD_NOT_FOUND });
    dropLogsOf(indexed + 2n);
    const receiptsBefore = proxy.calls("eth_getTransactionReceipt").length;
    expect(await tailStep(driver.tail, fence)).toMatchObject({ kind: "retry" });
    expect(proxy.calls("eth_getTransactionReceipt").length).toBeGreaterThan(receiptsBefore);
    expect(await checkpoint()).toBe(indexed);
    await driver.catchUp(fence);
    proxy.clear();
    await expectIndexIsTheNodes();
  });

  it("with a log moved to a block whose bloom does not hold it: refused and read again", async () => {
    const indexed = await checkpoint();
    await mintSome(anvil, token, 1, 3);
    await anvil.mine(2);
    const empty = await anvil.public.getBlock({ blockNumber: indexed + 2n });
    const rule = proxy.on(
      "eth_getLogs",
      {
        rewrite: (result) =>
          (result as JsonLog[]).map((log) =>
            BigInt(log.blockNumber) === indexed + 1n
              ? { ...log, blockNumber: numberToHex(empty.number), blockHash: empty.hash }
              : log,
          ),
      },
      { when: covers(indexed + 1n), times: 1 },
    );
    const step = await tailStep(driver.tail, fence);
    expect(step.kind === "retry" && step.reason).toMatch(/is not in the block's logs bloom/);
    expect(rule.taken).toBe(1);
    await driver.catchUp(fence);
    await expectIndexIsTheNodes();
  });

  it("costs no receipts read on the normal path: blocks with the scope's logs, and blocks whose bloom rules them out", async () => {
    proxy.clear();
    const before = proxy.calls("eth_getBlockReceipts").length;
    await mintSome(anvil, token, 6, 4);
    await anvil.mine(3);
    await driver.catchUp(fence);
    expect(proxy.calls("eth_getBlockReceipts").length).toBe(before);
    await expectIndexIsTheNodes();

    // The bloom itself, on a real block holding one Transfer of the token.
    const log = (await anvil.public.getLogs({ address: token, fromBlock: deployedAt, toBlock: "latest" })).at(
      -1,
    );
    const block = await anvil.public.getBlock({ blockHash: log?.blockHash as Hex });
    expect(bloomMayContain(block.logsBloom as Hex, token)).toBe(true);
    expect(bloomMayContain(block.logsBloom as Hex, toEventSelector(LEDGER_EVENTS.Transfer))).toBe(true);
    expect(bloomMayContain(block.logsBloom as Hex, "0x00000000000000000000000000000000000000aa")).toBe(false);
  });
});

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tailStep } from "../../src/ledger-index/live-tail.js";
import { rewindChain } from "../../src/ledger-index/rewind.js";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import { killAllProcesses, spawnProcess } from "../support/processes.js";
import { redisUrl } from "../support/redis.js";
import {
  deployerWallet,
  deployToken,
  dumpIndex,
  HOLDERS,
  ledgerDriver,
  logger,
  mintSome,
  SHARD_COUNT,
  takeChainShard,
} from "./support/ledger-world.js";

/**
 * Rewinding a chain (docs/ledger-index.md, "Rewinding a chain"): a reorganisation deeper than the
 * stored blocks stops the tail with LEDGER_REORG_TOO_DEEP; the operator's rewind to a common
 * height, fenced by the shard's current owner epoch, lets the tail re-ingest, and the index then
 * equals a from-scratch index of the final chain.
 */

/** Finality depth 2 and batches of 3: the tail keeps about 5 blocks, so a 12-deep reorg is too deep. */
const SETTINGS = { batchBlocks: 3, rangeBlocks: 10, depth: 2 };
let anvil: Anvil;
let db: TestDatabase;
let token: `0x${string}`;
let deployedAt: bigint;

beforeAll(async () => {
  [anvil, db] = await Promise.all([startAnvil(), createTestDatabase()]);
  ({ token, block: deployedAt } = await deployToken(anvil));
});

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

const acme = () => ({ chainId: anvil.chainId, orgId: "acme", address: token, kind: "erc20" as const });

describe("a reorganisation deeper than the stored blocks", () => {
  it("stops the tail until an operator rewinds the chain; the tail then re-ingests the final chain", async () => {
    const driver = ledgerDriver(db.pool, anvil, SETTINGS);
    await driver.scope.add({ ...acme(), fromHeight: deployedAt });
    await mintSome(anvil, token, 16);
    const fence = await takeChainShard(db.pool, anvil.chainId, "tail");
    await driver.catchUp(fence);
    const head = await anvil.public.getBlockNumber();

    const from = deployerWallet(anvil).account?.address as string;
    const mint = (amount: bigint) => ({
      from,
      to: token,
      data: `0x40c10f19${(HOLDERS[3] as string).slice(2).padStart(64, "0")}${amount.toString(16).padStart(64, "0")}`,
    });
    await anvil.test.request({
      method: "anvil_reorg" as never,
      params: [
        12,
        [
          [mint(31n), 0],
          [mint(32n), 5],
          [mint(33n), 11],
        ],
      ] as never,
    });
    await expect(tailStep(driver.tail, fence)).rejects.toMatchObject({ code: "LEDGER_REORG_TOO_DEEP" });

    // Refused above the checkpoint, and under a superseded epoch.
    const rewind = (height: bigint) =>
      rewindChain(
        driver.tail.index,
        driver.tail.reader,
        { chainId: anvil.chainId, height, shardCount: SHARD_COUNT },
        logger,
      );
    await expect(rewind(head + 5n)).rejects.toMatchObject({ code: "LEDGER_REWIND_INVALID" });
    const ancestor = await anvil.public.getBlock({ blockNumber: head - 12n });
    await expect(
      driver.tail.index.rewind({ ...fence, epoch: String(BigInt(fence.epoch) - 1n) }, anvil.chainId, {
        height: ancestor.number,
        hash: ancestor.hash,
        parentHash: ancestor.parentHash,
        time: new Date(Number(ancestor.timestamp) * 1000),
      }),
    ).rejects.toMatchObject({ code: "SHARD_EPOCH_STALE" });

    // The operator's command, as a process of its own, with the roles' configuration.
    const dir = mkdtempSync(join(tmpdir(), "tenor-rewind-"));
    writeFileSync(
      join(dir, "tenor.yaml"),
      [
        `durable: { sharding: { shardCount: ${SHARD_COUNT} } }`,
        "chains:",
        `  - { id: ${anvil.chainId}, name: anvil, rpcUrls: ["${anvil.url}"], finality: { depth: 2 } }`,
        "",
      ].join("\n"),
    );
    const command = spawnProcess(
      "ledger-rewind",
      ...entryCommand("scripts/ledger-rewind.ts", [
        "--chain",
        String(anvil.chainId),
        "--to",
        String(head - 12n),
      ]),
      { env: { DATABASE_URL: db.url, REDIS_URL: redisUrl(), TENOR_CONFIG: join(dir, "tenor.yaml") } },
    );
    expect((await command.exit).code, command.stderr()).toBe(0);
    expect(JSON.parse(command.stdout().trim().split("\n").at(-1) as string)).toMatchObject({
      from: head.toString(),
      to: (head - 12n).toString(),
    });
    expect(await driver.tail.index.cursor(anvil.chainId)).toEqual({
      height: ancestor.number,
      hash: ancestor.hash,
    });
    // The running tail (same owner epoch) goes on from the rewound checkpoint.
    await driver.catchUp(fence);

    const fresh = await createTestDatabase();
    try {
      const again = ledgerDriver(fresh.pool, anvil, SETTINGS);
      await again.scope.add({ ...acme(), fromHeight: deployedAt });
      await again.catchUp(await takeChainShard(fresh.pool, anvil.chainId, "scratch"));
      const final = await dumpIndex(db.pool, anvil.chainId);
      expect(final.transfers.map((t) => t.value)).toEqual(expect.arrayContaining(["31", "32", "33"]));
      expect(final).toEqual(await dumpIndex(fresh.pool, anvil.chainId));
    } finally {
      await fresh.drop();
    }
  });
});

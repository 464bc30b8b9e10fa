import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyLogs, type LedgerLogs } from "../../../src/ledger-index/store/domain-logs.js";
import { PgLedgerRanges } from "../../../src/ledger-index/store/ranges.js";
import type { Erc20TransferLog } from "../../../src/ledger-index/store/transfers.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";

/**
 * Catch-up leases (docs/ledger-index.md, "Historical catch-up"), against PostgreSQL alone: a
 * commit under a superseded lease epoch is refused and writes nothing; an expired lease is
 * offered again and resumes at the committed cursor; a log whose block the live tail holds with
 * another hash (a rolled-back branch) is refused.
 */

const CHAIN = 5;
const TOKEN = `0x${"ab".repeat(20)}`;
const HOLDER = `0x${"cd".repeat(20)}`;
const ZERO = `0x${"00".repeat(20)}`;
let db: TestDatabase;
let ranges: PgLedgerRanges;

beforeAll(async () => {
  db = await createTestDatabase();
  ranges = new PgLedgerRanges(db.pool);
  await db.pool.query(
    "INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height, backfill_spawned) VALUES ($1, 'acme', $2, 'erc20', 0, true)",
    [CHAIN, TOKEN],
  );
  await db.pool.query(
    `INSERT INTO ledger_chains (chain_id, indexed_height, indexed_hash, indexed_block_time, head_height, head_block_time)
     VALUES ($1, 100, '0xtip', now(), 100, now())`,
    [CHAIN],
  );
  await db.pool.query(
    "INSERT INTO ledger_ranges (chain_id, address, from_block, to_block, next_block) VALUES ($1, $2, 0, 19, 0)",
    [CHAIN, TOKEN],
  );
});

afterAll(async () => {
  await db?.drop();
});

/** A catch-up chunk holding only these Transfer logs. */
const transfers = (...logs: Erc20TransferLog[]): LedgerLogs => ({ ...emptyLogs(), transfers: logs });

const mint = (block: number, value: bigint, blockHash = `0xb${block}`): Erc20TransferLog => ({
  blockNumber: BigInt(block),
  logIndex: 0,
  blockHash,
  txHash: `0xt${block}`,
  token: TOKEN,
  from: ZERO,
  to: HOLDER,
  value,
});

async function balance(): Promise<string | undefined> {
  const { rows } = await db.pool.query("SELECT balance::text FROM ledger_erc20_balances WHERE holder = $1", [
    HOLDER,
  ]);
  return rows[0]?.balance;
}

describe("catch-up range leases", () => {
  it("refuse a commit under a superseded epoch, re-offer an expired lease at its cursor, and complete once", async () => {
    const first = await ranges.claim([CHAIN], "a", 60_000);
    expect(first).toMatchObject({ nextBlock: 0n, epoch: "1", kinds: ["erc20"] });
    const progressed = await ranges.commit(
      first as NonNullable<typeof first>,
      4n,
      transfers(mint(2, 7n)),
      "a",
      60_000,
    );
    expect(progressed.completed).toBe(false);
    expect(await ranges.claim([CHAIN], "b", 60_000)).toBeNull();

    // a stalls past its lease; b is offered the range at a's committed cursor.
    await db.pool.query("UPDATE ledger_ranges SET lease_expires_at = now() - interval '1 second'");
    const second = await ranges.claim([CHAIN], "b", 60_000);
    expect(second).toMatchObject({ nextBlock: 5n, epoch: "2" });

    await expect(ranges.commit(progressed, 9n, transfers(mint(6, 1000n)), "a", 60_000)).rejects.toMatchObject(
      {
        code: "LEDGER_RANGE_LEASE_LOST",
      },
    );
    expect(await balance()).toBe("7");

    const done = await ranges.commit(
      second as NonNullable<typeof second>,
      19n,
      transfers(mint(6, 5n)),
      "b",
      60_000,
    );
    expect(done.completed).toBe(true);
    expect(await balance()).toBe("12");
    await expect(ranges.commit(done, 19n, transfers(), "b", 60_000)).rejects.toMatchObject({
      code: "LEDGER_RANGE_LEASE_LOST",
    });
    const { rows } = await db.pool.query("SELECT completed_by, next_block::int FROM ledger_ranges");
    expect(rows).toEqual([{ completed_by: "b", next_block: 20 }]);
  });

  it("refuses a log of a block the live tail holds with another hash", async () => {
    await db.pool.query(
      "INSERT INTO ledger_ranges (chain_id, address, from_block, to_block, next_block) VALUES ($1, $2, 40, 49, 40)",
      [CHAIN, TOKEN],
    );
    await db.pool.query(
      "INSERT INTO ledger_blocks (chain_id, height, hash, parent_hash, block_time) VALUES ($1, 42, '0xcanonical', '0xp', now())",
      [CHAIN],
    );
    const lease = await ranges.claim([CHAIN], "c", 60_000);
    await expect(
      ranges.commit(lease as NonNullable<typeof lease>, 49n, transfers(mint(42, 9n, "0xstale")), "c", 60_000),
    ).rejects.toMatchObject({ code: "LEDGER_CURSOR_MOVED" });
    expect(await balance()).toBe("12");
    const done = await ranges.commit(
      lease as NonNullable<typeof lease>,
      49n,
      transfers(mint(42, 9n, "0xcanonical")),
      "c",
      60_000,
    );
    expect(done.completed).toBe(true);
    expect(await balance()).toBe("21");
  });
});

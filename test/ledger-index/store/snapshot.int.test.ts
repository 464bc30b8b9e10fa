import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerSnapshot } from "../../../src/ledger-index/store/snapshot.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";

/** The holder snapshot sums indexed transfers up to a height, for a token the organisation tracks. */

const TOKEN = "0x00000000000000000000000000000000000000aa";
const OTHER = "0x00000000000000000000000000000000000000bb";
const ZERO = "0x0000000000000000000000000000000000000000";
const [A, B, C] = ["0xa", "0xb", "0xc"].map((p) => p.padEnd(42, "0"));

let db: TestDatabase;
let snapshot: PgLedgerSnapshot;

beforeAll(async () => {
  db = await createTestDatabase();
  snapshot = new PgLedgerSnapshot(db.pool);
  await db.pool.query(
    `INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height, removed_height) VALUES
       (1, 'acme', $1, 'erc20', 10, NULL), (1, 'other-org', $2, 'erc20', 10, NULL), (1, 'gone', $1, 'erc20', 10, 15)`,
    [TOKEN, OTHER],
  );
  const transfers: [number, string, string, string, string][] = [
    [10, TOKEN, ZERO, A as string, "100"], // mint 100 to A
    [11, TOKEN, ZERO, B as string, "50"],
    [12, TOKEN, A as string, C as string, "30"],
    [13, TOKEN, B as string, A as string, "50"], // B empties
    [14, OTHER, ZERO, C as string, "999"], // another token
    [20, TOKEN, A as string, ZERO, "120"], // A burns everything
  ];
  for (const [i, [block, token, from, to, value]] of transfers.entries()) {
    await db.pool.query(
      `INSERT INTO ledger_erc20_transfers (chain_id, block_number, log_index, block_hash, tx_hash, token, from_address, to_address, value)
       VALUES (1, $1, $2, '0xh', '0xt', $3, $4, $5, $6)`,
      [block, i, token, from, to, value],
    );
  }
});

afterAll(async () => {
  await db?.drop();
});

describe("PgLedgerSnapshot.holdersAt", () => {
  it("sums transfers up to the height: positive balances only, the zero address never, in address order", async () => {
    const at = (height: bigint) => snapshot.holdersAt({ chainId: 1, orgId: "acme", token: TOKEN, height });
    expect(await at(11n)).toEqual({
      tracked: true,
      holders: [
        { holder: A, balance: "100" },
        { holder: B, balance: "50" },
      ],
    });
    expect((await at(13n)).holders).toEqual([
      { holder: A, balance: "120" },
      { holder: C, balance: "30" },
    ]);
    expect((await at(20n)).holders).toEqual([{ holder: C, balance: "30" }]);
  });

  it("reads only a token the organisation tracked at the height", async () => {
    const read = (orgId: string, token: string, height: bigint) =>
      snapshot.holdersAt({ chainId: 1, orgId, token, height });
    expect(await read("other-org", TOKEN, 13n)).toEqual({ tracked: false, holders: [] });
    expect(await read("acme", OTHER, 14n)).toEqual({ tracked: false, holders: [] });
    expect(await read("acme", TOKEN, 9n)).toEqual({ tracked: false, holders: [] });
    expect((await read("gone", TOKEN, 13n)).tracked).toBe(true);
    expect((await read("gone", TOKEN, 16n)).tracked).toBe(false);
    // Addresses are matched lowercase.
    expect((await read("acme", TOKEN.toUpperCase().replace("0X", "0x"), 11n)).tracked).toBe(true);
  });
});

import type { PoolClient } from "pg";

/** One ERC-20 Transfer log, as ingest hands it to the store. Addresses lowercase. */
export interface Erc20TransferLog {
  blockNumber: bigint;
  logIndex: number;
  blockHash: string;
  txHash: string;
  token: string;
  from: string;
  to: string;
  value: bigint;
}

const ZERO = "0x0000000000000000000000000000000000000000";

/**
 * Inserts the logs the scope admits (a scope row of the token whose [added, removed] heights
 * contain the log's block, read in this transaction, so a committed removal is always honoured)
 * and folds the rows actually inserted into balances and supply. A log already present
 * (same chain, block, log index) is skipped and folded nowhere, so a replayed batch or an
 * overlapping catch-up range never counts twice. Returns the number of rows inserted.
 */
export async function insertTransfers(
  client: PoolClient,
  chainId: number,
  logs: readonly Erc20TransferLog[],
) {
  if (logs.length === 0) return 0;
  const { rows } = await client.query<{ inserted: number }>(
    `WITH input AS (
       SELECT * FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::numeric[])
         AS t(block_number, log_index, block_hash, tx_hash, token, from_address, to_address, value)
     ), inserted AS (
       INSERT INTO ledger_erc20_transfers
         (chain_id, block_number, log_index, block_hash, tx_hash, token, from_address, to_address, value)
       SELECT $1, i.block_number, i.log_index, i.block_hash, i.tx_hash, i.token, i.from_address, i.to_address, i.value
       FROM input i
       WHERE EXISTS (SELECT 1 FROM ledger_scope s
                     WHERE s.chain_id = $1 AND s.address = i.token AND s.kind = 'erc20'
                       AND i.block_number >= s.added_height
                       AND (s.removed_height IS NULL OR i.block_number <= s.removed_height))
       ON CONFLICT DO NOTHING
       RETURNING token, from_address, to_address, value
     ), ${FOLD_CTES}
     SELECT (SELECT count(*) FROM inserted)::int AS inserted`,
    [chainId, ...transferColumns(logs)],
  );
  return rows[0]?.inserted ?? 0;
}

/**
 * The logs as the eight column arrays `unnest` takes, in the order block_number, log_index,
 * block_hash, tx_hash, token, from_address, to_address, value (types bigint, int, text × 5, numeric).
 */
export function transferColumns(logs: readonly Erc20TransferLog[]): unknown[] {
  return [
    logs.map((l) => l.blockNumber.toString()),
    logs.map((l) => l.logIndex),
    logs.map((l) => l.blockHash),
    logs.map((l) => l.txHash),
    logs.map((l) => l.token),
    logs.map((l) => l.from),
    logs.map((l) => l.to),
    logs.map((l) => l.value.toString()),
  ];
}

/**
 * Deletes every transfer above `height` and takes it back out of balances and supply, in the
 * caller's transaction (a reorganisation's rollback). Returns the number of rows removed.
 */
export async function deleteTransfersAbove(
  client: PoolClient,
  chainId: number,
  height: bigint,
): Promise<number> {
  const { rows } = await client.query<{ deleted: number }>(
    `WITH gone AS (
       DELETE FROM ledger_erc20_transfers WHERE chain_id = $1 AND block_number > $2
       RETURNING token, from_address, to_address, value
     ), inserted AS (
       SELECT token, from_address, to_address, -value AS value FROM gone
     ), ${FOLD_CTES}
     SELECT (SELECT count(*) FROM gone)::int AS deleted`,
    [chainId, height.toString()],
  );
  return rows[0]?.deleted ?? 0;
}

/**
 * CTEs folding the CTE `inserted` (token, from_address, to_address, value; a negative value undoes) into
 * balances and supply (data-modifying CTEs run whether or not they are read). Rows are upserted in key order, so two writers folding into the same rows
 * take their locks in the same order and do not deadlock.
 */
const FOLD_CTES = `
  deltas AS (
    SELECT token, to_address AS holder, value AS delta FROM inserted WHERE to_address <> '${ZERO}'
    UNION ALL
    SELECT token, from_address, -value FROM inserted WHERE from_address <> '${ZERO}'
  ), balances AS (
    INSERT INTO ledger_erc20_balances (chain_id, token, holder, balance)
    SELECT $1, token, holder, sum(delta) FROM deltas GROUP BY token, holder ORDER BY token, holder
    ON CONFLICT (chain_id, token, holder) DO UPDATE SET balance = ledger_erc20_balances.balance + excluded.balance
    RETURNING 1
  ), supplies AS (
    INSERT INTO ledger_erc20_supplies (chain_id, token, total_supply)
    SELECT $1, token,
           sum(CASE WHEN from_address = '${ZERO}' THEN value ELSE 0 END)
         - sum(CASE WHEN to_address = '${ZERO}' THEN value ELSE 0 END)
    FROM inserted GROUP BY token ORDER BY token
    ON CONFLICT (chain_id, token) DO UPDATE SET total_supply = ledger_erc20_supplies.total_supply + excluded.total_supply
    RETURNING 1
  )`;

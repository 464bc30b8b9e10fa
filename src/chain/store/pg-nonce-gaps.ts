import type { Pool } from "pg";
import type { Hex } from "viem";
import { addressKey, type ChainAddress, chainAddress, hexData } from "../../values/address.js";

/** A nonce reserved for an execution that failed, with the fill recorded for it so far (if any). */
export interface NonceGap {
  chainId: number;
  sender: ChainAddress;
  nonce: number;
  /** The failed execution whose reservation holds the nonce. */
  commandId: string;
  /** The self-transfer signed for it earlier, when one was. */
  fill?: { raw: Hex; hash: Hex };
}

/**
 * Nonces held by failed executions of `workflow` whose gap is not settled yet, lowest first per
 * sender. Driven from the failed executions (the status index) into the reservations' unique
 * command id, so the pass costs what failed, not every nonce ever reserved.
 */
const OPEN_GAPS_SQL = `
  SELECT r.chain_id::text AS chain_id, r.sender, r.nonce::text AS nonce, r.command_id, f.raw, f.hash
  FROM executions e
  JOIN nonce_reservations r ON r.command_id = e.id::text
  LEFT JOIN nonce_gap_fills f ON f.chain_id = r.chain_id AND f.sender = r.sender AND f.nonce = r.nonce
  WHERE e.status = 'failed' AND e.workflow = $1 AND f.settled_at IS NULL
  ORDER BY r.chain_id, r.sender, r.nonce
  LIMIT $2`;

/** Keeps the first signed fill of a gap; a second one (another run, another runner) inserts nothing. */
const RECORD_FILL_SQL = `
  INSERT INTO nonce_gap_fills (chain_id, sender, nonce, command_id, raw, hash)
  VALUES ($1::bigint, $2, $3::bigint, $4, $5, $6)
  ON CONFLICT DO NOTHING
  RETURNING raw, hash`;

const FILL_SQL = `
  SELECT raw, hash FROM nonce_gap_fills WHERE chain_id = $1::bigint AND sender = $2 AND nonce = $3::bigint`;

/** The chain's mined nonce passed the gap: done, whoever used it. */
const SETTLE_SQL = `
  INSERT INTO nonce_gap_fills (chain_id, sender, nonce, command_id, settled_at)
  VALUES ($1::bigint, $2, $3::bigint, $4, now())
  ON CONFLICT (chain_id, sender, nonce) DO UPDATE SET settled_at = COALESCE(nonce_gap_fills.settled_at, now())`;

export async function listOpenNonceGaps(pool: Pool, workflow: string, limit: number): Promise<NonceGap[]> {
  const { rows } = await pool.query<{
    chain_id: string;
    sender: string;
    nonce: string;
    command_id: string;
    raw: string | null;
    hash: string | null;
  }>(OPEN_GAPS_SQL, [workflow, limit]);
  return rows.map((r) => ({
    chainId: Number(r.chain_id),
    sender: chainAddress(r.sender, "nonce_reservations.sender"),
    nonce: Number(r.nonce),
    commandId: r.command_id,
    ...(r.raw && r.hash
      ? {
          fill: { raw: hexData(r.raw, "nonce_gap_fills.raw"), hash: hexData(r.hash, "nonce_gap_fills.hash") },
        }
      : {}),
  }));
}

/**
 * Records the signed fill of `gap` before it is broadcast, and returns the fill that holds the
 * gap: this one, or the one another run recorded first (then this one is never broadcast).
 */
export async function recordNonceGapFill(
  pool: Pool,
  gap: NonceGap,
  fill: { raw: Hex; hash: Hex },
): Promise<{ raw: Hex; hash: Hex }> {
  const inserted = await pool.query<{ raw: string; hash: string }>(RECORD_FILL_SQL, [
    gap.chainId,
    addressKey(gap.sender),
    gap.nonce,
    gap.commandId,
    fill.raw,
    fill.hash,
  ]);
  // Lost the race: read the winner in a statement of its own. Within the INSERT's statement the
  // winner's row, committed while the insert waited on it, is not in the snapshot.
  const kept =
    inserted.rows[0] ??
    (
      await pool.query<{ raw: string | null; hash: string | null }>(FILL_SQL, [
        gap.chainId,
        addressKey(gap.sender),
        gap.nonce,
      ])
    ).rows[0];
  if (!kept?.raw || !kept.hash) {
    throw new Error(
      `nonce gap ${gap.chainId}:${addressKey(gap.sender)}:${gap.nonce} is settled or has no signed fill`,
    );
  }
  return { raw: hexData(kept.raw, "nonce_gap_fills.raw"), hash: hexData(kept.hash, "nonce_gap_fills.hash") };
}

export async function settleNonceGap(pool: Pool, gap: NonceGap): Promise<void> {
  await pool.query(SETTLE_SQL, [gap.chainId, addressKey(gap.sender), gap.nonce, gap.commandId]);
}

/** The recorded fills of one sender on one chain (tests and the operator). */
export async function nonceGapFills(
  pool: Pool,
  chainId: number,
  sender: string,
): Promise<{ nonce: number; hash: string | null; settled: boolean }[]> {
  const { rows } = await pool.query<{ nonce: string; hash: string | null; settled: boolean }>(
    `SELECT nonce::text AS nonce, hash, settled_at IS NOT NULL AS settled FROM nonce_gap_fills
     WHERE chain_id = $1::bigint AND sender = $2 ORDER BY nonce`,
    [chainId, addressKey(sender)],
  );
  return rows.map((r) => ({ nonce: Number(r.nonce), hash: r.hash, settled: r.settled }));
}

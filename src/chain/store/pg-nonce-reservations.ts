import type { QueryResult, QueryResultRow } from "pg";
import { addressKey } from "../../values/address.js";

/** Where the statements run: a pool, a client, or the context of an entity command (`ctx.query`). */
export interface StatementRunner {
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

export interface NonceRequest {
  chainId: number;
  /** 0x-prefixed address; stored lowercase. */
  sender: string;
  /** The reservation's idempotency id: asking again with it returns the same nonce. */
  commandId: string;
  /** Lowest nonce to hand out (the chain's pending count for a sender new to Tenor). Default 0. */
  floor?: number;
}

/** Attempts when a concurrent reservation took the nonce this one computed. */
const MAX_ATTEMPTS = 20;

/**
 * Takes the next nonce of (chain, sender): one past the highest reserved, at least `floor`. The
 * primary key (chain_id, sender, nonce) is the fence: two reservations that computed the same
 * nonce cannot both insert it, the loser sees no row and computes again. So even with keyed
 * serialization bypassed or broken, a nonce is never handed out twice. The unique
 * command id makes a repeated reservation return its first nonce.
 */
export const RESERVE_NONCE_SQL = `
  INSERT INTO nonce_reservations (chain_id, sender, nonce, command_id)
  SELECT $1::bigint, $2, GREATEST(COALESCE(MAX(nonce) + 1, 0), $3::bigint), $4
  FROM nonce_reservations WHERE chain_id = $1::bigint AND sender = $2
  ON CONFLICT DO NOTHING
  RETURNING nonce::text AS nonce`;

const RESERVED_SQL = "SELECT nonce::text AS nonce FROM nonce_reservations WHERE command_id = $1";

export async function reserveNonce(db: StatementRunner, request: NonceRequest): Promise<number> {
  const sender = addressKey(request.sender);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const existing = await db.query<{ nonce: string }>(RESERVED_SQL, [request.commandId]);
    if (existing.rows[0]) return Number(existing.rows[0].nonce);
    const inserted = await db.query<{ nonce: string }>(RESERVE_NONCE_SQL, [
      request.chainId,
      sender,
      request.floor ?? 0,
      request.commandId,
    ]);
    if (inserted.rows[0]) return Number(inserted.rows[0].nonce);
  }
  throw new Error(
    `nonce reservation for chain ${request.chainId} sender ${sender} lost ${MAX_ATTEMPTS} races in a row`,
  );
}

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

/**
 * Attempts when a concurrent reservation took the nonce this one computed. Every lost race is
 * another reservation's success, so a reservation loses at most as many rounds as there are
 * reservations racing it for the sender (a direct race of 60 lost 20 in a row); the bound only
 * stops a loop that no longer makes progress.
 */
const MAX_ATTEMPTS = 1_000;

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
    const existing = await reservedNonce(db, request.commandId);
    if (existing !== null) return existing;
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

async function reservedNonce(db: StatementRunner, commandId: string): Promise<number | null> {
  const { rows } = await db.query<{ nonce: string }>(RESERVED_SQL, [commandId]);
  return rows[0] ? Number(rows[0].nonce) : null;
}

/** First key of the per-(chain, sender) window lock (pg_advisory_xact_lock(int, int)); keyed inserts use 746010. */
const NONCE_WINDOW_LOCK = 746020;

/**
 * Locks the sender's reservations for the rest of the transaction: two entity batches of one
 * sender (the nonce entity grants several reservations per key at once) take their nonces one
 * batch after the other. A statement of its own: a statement that waited for the lock would
 * still read with the snapshot it took before waiting, and miss the other batch's nonces.
 */
const LOCK_SENDER_SQL = `SELECT pg_advisory_xact_lock(${NONCE_WINDOW_LOCK}, hashtext($1::text))`;

/**
 * Takes the sender's reservation lock for the rest of `db`'s transaction: no entity batch of the
 * sender grants a nonce until it ends.
 */
export async function lockSenderNonces(db: StatementRunner, chainId: number, sender: string): Promise<void> {
  await db.query(LOCK_SENDER_SQL, [`${chainId}:${addressKey(sender)}`]);
}

/**
 * Read after LOCK_SENDER_SQL: the reservation's nonce when it was made before, else the nonce the
 * sender's next reservation takes.
 */
const NEXT_NONCE_SQL = `
  SELECT (SELECT nonce::text FROM nonce_reservations WHERE command_id = $4) AS existing,
         GREATEST(COALESCE(MAX(nonce) + 1, 0), $3::bigint)::text AS next
  FROM nonce_reservations WHERE chain_id = $1::bigint AND sender = $2`;

/** Under the sender's lock no other entity reservation of the sender runs: `next` is free. */
const INSERT_NONCE_SQL = `
  INSERT INTO nonce_reservations (chain_id, sender, nonce, command_id)
  VALUES ($1::bigint, $2, $3::bigint, $4)
  ON CONFLICT DO NOTHING
  RETURNING nonce::text AS nonce`;

/** The sender's window (docs/chains.md, "Pending transactions per sender"). */
export interface NonceWindow {
  /** The sender's transactions the chain has mined (its `latest` transaction count); may be stale (lower). */
  mined: number;
  /** Most reserved nonces at or above `mined` (unconfirmed transactions of the sender). */
  maxPending: number;
}

/** A reservation, or the window's state when it is full. */
export type WindowedReservation = { nonce: number } | { full: { pending: number; bound: number } };

/**
 * The nonce entity's reservation: `reserveNonce` under the sender's lock (so two entity batches of
 * one sender take their nonces one batch after the other instead of racing on the primary key),
 * refused while the sender's `window` is full: `maxPending` reserved nonces not yet mined. A stale
 * `mined` only overstates what is pending, so the bound is never exceeded. A repeated reservation
 * (same command id) returns its first nonce whatever the window holds now.
 */
export async function reserveSenderNonce(
  db: StatementRunner,
  request: NonceRequest & { window?: NonceWindow },
): Promise<WindowedReservation> {
  const sender = addressKey(request.sender);
  await lockSenderNonces(db, request.chainId, sender);
  const { rows } = await db.query<{ existing: string | null; next: string }>(NEXT_NONCE_SQL, [
    request.chainId,
    sender,
    request.floor ?? 0,
    request.commandId,
  ]);
  const read = rows[0];
  if (read?.existing != null) return { nonce: Number(read.existing) };
  const next = Number(read?.next ?? request.floor ?? 0);
  if (request.window) {
    const pending = next - request.window.mined;
    if (pending >= request.window.maxPending) return { full: { pending, bound: request.window.maxPending } };
  }
  const inserted = await db.query<{ nonce: string }>(INSERT_NONCE_SQL, [
    request.chainId,
    sender,
    next,
    request.commandId,
  ]);
  if (inserted.rows[0]) return { nonce: Number(inserted.rows[0].nonce) };
  // A reservation outside the entity (reserveNonce called directly) took `next` meanwhile.
  const { window: _window, ...plain } = request;
  return { nonce: await reserveNonce(db, plain) };
}

import { z } from "zod";
import { defineEntity } from "../keyed/entity.js";
import { insertSignalBatch } from "../store/pg-execution-queries.js";
import { addressText, addressTextSchema } from "../values/address.js";
import { reserveSenderNonce } from "./store/pg-nonce-reservations.js";

export const ReserveNonceInput = z.object({
  chainId: z.number().int().positive(),
  sender: addressTextSchema(),
  /** Lowest nonce to hand out: the chain's pending transaction count when Tenor first sees a sender. */
  floor: z.number().int().min(0).optional(),
  /**
   * The sender's window (docs/chains.md, "Pending transactions per sender"): its mined transaction
   * count as the caller last read it, and the most unmined nonces it may hold. Without it the
   * reservation is unbounded (the lifecycle's versions before 5).
   */
  window: z.object({ mined: z.number().int().min(0), maxPending: z.number().int().min(1) }).optional(),
  /**
   * The id the nonce is recorded under, when it differs from the command id: a run that asks
   * again after a full window sends a new command for the same reservation (its execution id).
   */
  reservationId: z.string().min(1).optional(),
  /**
   * The run parked on this reservation (lifecycle version 6): the reply is stored as its signal
   * `signal` in the transaction that grants the nonce (or answers `full`), so the grant reaches
   * the run even when every wake is lost.
   */
  grant: z.object({ executionId: z.uuid(), signal: z.string().min(1) }).optional(),
});

/** The reserved nonce, or (bounded reservations only) the sender's full window. */
export const ReservedNonce = z.union([
  z.object({ nonce: z.number().int().min(0) }),
  z.object({ full: z.object({ pending: z.number().int(), bound: z.number().int().min(1) }) }),
]);

/**
 * Reservations of one sender granted in one entity turn (the entity's key limit): the entity's
 * claim takes up to this many queued reservations of a sender in one batch, and the batch grants
 * them in seq order in one PostgreSQL transaction. A sender's window (`maxPendingPerSender`, at
 * most a few dozen) bounds how many of them can be granted at once anyway.
 */
export const NONCE_GRANTS_PER_TURN = 64;

/**
 * Nonce reservation per (chain, sender) (docs/keyed.md, "Guarantees and their fences"): the first
 * keyed entity. A sender's reservations are granted in batches, in arrival order within a batch;
 * batches of one sender take a per-sender lock, and the reservation itself is fenced by
 * PostgreSQL's primary key, so even a broken serialization cannot hand out a nonce twice. The
 * reservation id (default: the command id) is the reservation's idempotency id: use the
 * transaction's stable id. Gaps (a reserved nonce never broadcast) are filled by nonce recovery
 * (src/chain/nonce-recovery.ts).
 */
export const nonceEntity = defineEntity({
  name: "chain.nonce",
  key: (input) => `${input.chainId}:${addressText(input.sender)}`,
  limit: NONCE_GRANTS_PER_TURN,
  handlers: {
    reserve: {
      input: ReserveNonceInput,
      output: ReservedNonce,
      async handle(ctx, input) {
        const reply = await reserveSenderNonce(ctx, {
          chainId: input.chainId,
          sender: input.sender,
          commandId: input.reservationId ?? ctx.commandId,
          ...(input.floor !== undefined ? { floor: input.floor } : {}),
          ...(input.window ? { window: input.window } : {}),
        });
        if (input.grant) {
          await insertSignalBatch(ctx, [
            {
              executionId: input.grant.executionId,
              name: input.grant.signal,
              payload: reply,
              idempotencyKey: nonceGrantKey(ctx.commandId),
            },
          ]);
        }
        return reply;
      },
    },
  },
});

/** The idempotency key of the grant signal of reservation command `commandId`: one signal per command. */
export function nonceGrantKey(commandId: string): string {
  return `nonce-grant:${commandId}`;
}

/** Every chain entity of this release; the runner registers exactly these. */
export const CHAIN_ENTITIES = [nonceEntity] as const;

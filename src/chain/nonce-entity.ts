import { z } from "zod";
import { defineEntity } from "../keyed/entity.js";
import { addressText, addressTextSchema } from "../values/address.js";
import { reserveNonce } from "./store/pg-nonce-reservations.js";

export const ReserveNonceInput = z.object({
  chainId: z.number().int().positive(),
  sender: addressTextSchema(),
  /** Lowest nonce to hand out: the chain's pending transaction count when Tenor first sees a sender. */
  floor: z.number().int().min(0).optional(),
});

export const ReservedNonce = z.object({ nonce: z.number().int().min(0) });

/**
 * Nonce reservation per (chain, sender) (docs/keyed.md, "Guarantees and their fences"): the first
 * keyed entity. Commands for one sender on one chain are handled one at a time in arrival order,
 * and the reservation itself is fenced by PostgreSQL's primary key, so even a broken serialization
 * cannot hand out a nonce twice. The command id is the reservation's idempotency id (use the
 * transaction's stable id). Gaps (a reserved nonce never broadcast) are left to a nonce-recovery
 * pass (not built yet).
 */
export const nonceEntity = defineEntity({
  name: "chain.nonce",
  key: (input) => `${input.chainId}:${addressText(input.sender)}`,
  handlers: {
    reserve: {
      input: ReserveNonceInput,
      output: ReservedNonce,
      async handle(ctx, input) {
        const nonce = await reserveNonce(ctx, {
          chainId: input.chainId,
          sender: input.sender,
          commandId: ctx.commandId,
          ...(input.floor !== undefined ? { floor: input.floor } : {}),
        });
        return { nonce };
      },
    },
  },
});

/** Every chain entity of this release; the runner registers exactly these. */
export const CHAIN_ENTITIES = [nonceEntity] as const;

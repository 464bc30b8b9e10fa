import { z } from "zod";
import type { WorkflowContext } from "../../engine/context.js";
import type { ChainAddress } from "../../values/index.js";
import { ReservedNonce } from "../nonce-entity.js";
import { nonceWindowKey } from "../nonce-window.js";
import { chainAccessService } from "./chain-access.js";

/** Details of a `nonce` wait: the sender's window is full (docs/chains.md, "Pending transactions per sender"). */
export interface NonceWaitDetails {
  chainId: number;
  sender: string;
  /** The signal a run of the sender sends when its transaction is mined. */
  signal: string;
  /** Reserved nonces of the sender not yet mined, when the reservation was refused. */
  pending: number;
  /** The chain's `maxPendingPerSender`. */
  bound: number;
  reason: string;
}

/** The first recheck of a full window, in ms; each later one doubles, up to WINDOW_RECHECK_MAX_MS. */
const WINDOW_RECHECK_FIRST_MS = 2_000;
const WINDOW_RECHECK_MAX_MS = 120_000;

/**
 * How long a run waits on a full window, at its `attempt`-th reservation, before it asks again
 * without being woken. The wake of a mined transaction is the way out; the recheck only catches a
 * run that parked just after the last release it could have heard. It backs off because every
 * recheck is a turn: at a fixed 2 s, 2,700 runs queued behind 32 senders' windows asked 1,350
 * times a second, their turns filled the runner's queue ahead of the runs that held nonces, and
 * none of 3,200 transfers completed in 15 minutes (bench W17).
 */
export function windowRecheckMs(attempt: number): number {
  return Math.min(WINDOW_RECHECK_FIRST_MS * 2 ** Math.min(attempt, 16), WINDOW_RECHECK_MAX_MS);
}

const Counts = z.object({
  floor: z.number().int().min(0),
  mined: z.number().int().min(0),
  maxPending: z.number().int().min(1),
});

/**
 * Reserves the run's nonce within the sender's window (lifecycle version 5). Each attempt reads
 * the sender's pending and mined transaction counts, then asks the nonce entity, which grants a
 * sender's queued reservations in batches; a full window parks the run on a `nonce` wait, woken
 * when one of the sender's transactions is mined (`releaseNonceWindow`) or after `windowRecheckMs`.
 * Every attempt records the nonce under the execution's id, so a repeated attempt never takes a
 * second nonce; each sends its own entity command (a full window's answer is final for its command).
 */
export async function reserveNonceWithinWindow(
  ctx: WorkflowContext,
  chainId: number,
  sender: ChainAddress,
): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const counts = await ctx.step(`nonce.counts:${attempt}`, () => readCounts(ctx, chainId, sender), {
      schema: Counts,
    });
    const reply = await ctx.step(`nonce.reserve:${attempt}`, () =>
      ctx.service(chainAccessService).reserveNonceWithin({
        chainId,
        sender,
        floor: counts.floor,
        window: { mined: counts.mined, maxPending: counts.maxPending },
        reservationId: ctx.executionId,
        commandId: reservationCommandId(ctx.executionId, attempt),
      }),
    );
    if ("nonce" in reply) return reply.nonce;
    await waitForWindow(ctx, attempt, chainId, sender, reply.full);
  }
}

/**
 * How long a run parked on its queued reservation waits for the grant's wake before it reads the
 * command's reply itself: the wake (sent by the runner that hears the reply) and the sweep are the
 * usual ways out; this bounds what a lost wake costs.
 */
const GRANT_RECHECK = "30s";

/** A reservation's answer as the run receives it (the signal's payload, or the command's stored reply). */
const Posted = z.object({ reply: ReservedNonce.nullable() });

/**
 * Reserves the run's nonce within the sender's window without holding a turn slot while the
 * reservation queues (lifecycle version 6; docs/chains.md, "A queued reservation parks its run").
 * Step `nonce.send:N` commits the entity command and returns; unless the command was answered
 * already, the run parks on signal `nonce.granted:N` (kind `nonce`, naming sender and chain), which
 * the nonce entity stores in the transaction that answers the command and the sending runner wakes.
 * Each GRANT_RECHECK without the signal, step `nonce.check:N:K` reads the command's stored reply
 * by its id (a read: it sends nothing). A `full` answer parks on the sender's window as
 * version 5 does, then asks again as attempt N + 1. The nonce is recorded under the execution's
 * id, so no replay or repeated command takes a second one.
 */
export async function reserveNonceParked(
  ctx: WorkflowContext,
  chainId: number,
  sender: ChainAddress,
): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const counts = await ctx.step(`nonce.counts:${attempt}`, () => readCounts(ctx, chainId, sender), {
      schema: Counts,
    });
    const signal = `nonce.granted:${attempt}`;
    const commandId = reservationCommandId(ctx.executionId, attempt);
    const post = () =>
      ctx.service(chainAccessService).postNonceReservation({
        chainId,
        sender,
        floor: counts.floor,
        window: { mined: counts.mined, maxPending: counts.maxPending },
        reservationId: ctx.executionId,
        commandId,
        grant: { executionId: ctx.executionId, signal },
      });
    let { reply } = await ctx.step(`nonce.send:${attempt}`, post, { schema: Posted });
    for (let check = 0; reply === null; check++) {
      ctx.progress({ milestone: 1, stage: "queued for a nonce" });
      const granted = await ctx.waitForSignal(signal, {
        schema: ReservedNonce,
        timeout: GRANT_RECHECK,
        presentAs: {
          kind: "nonce",
          name: queuedReservationName(chainId, sender),
          // `signal` lets the park's second look and the sweep see a grant stored before the wait.
          details: {
            chainId,
            sender,
            signal,
            reason: `queued for a nonce of ${sender} on chain ${chainId}: the sender's earlier reservations are granted first`,
          },
        },
      });
      reply = granted.timedOut
        ? (
            await ctx.step(
              `nonce.check:${attempt}:${check}`,
              () => ctx.service(chainAccessService).nonceReservationReply(commandId),
              { schema: Posted },
            )
          ).reply
        : granted.payload;
    }
    if ("nonce" in reply) return reply.nonce;
    await waitForWindow(ctx, attempt, chainId, sender, reply.full);
  }
}

/**
 * The wait name of a run parked on its queued reservation: not the window's name, so the window's
 * wake (which looks its waiters up by that name) never reads parked reservations.
 */
export function queuedReservationName(chainId: number, sender: string): string {
  return `reservation:${nonceWindowKey(chainId, sender)}`;
}

/**
 * The entity command id of a run's `attempt`-th reservation, the same in every lifecycle version:
 * the execution's id for the first, so a replayed or repeated attempt posts the same command.
 */
function reservationCommandId(executionId: string, attempt: number): string {
  return attempt === 0 ? executionId : `${executionId}:${attempt}`;
}

async function readCounts(ctx: WorkflowContext, chainId: number, sender: ChainAddress) {
  const node = ctx.service(chainAccessService).chains.get(chainId);
  const [floor, mined] = await Promise.all([
    node.public.getTransactionCount({ address: sender, blockTag: "pending" }),
    node.public.getTransactionCount({ address: sender, blockTag: "latest" }),
  ]);
  return { floor, mined, maxPending: node.config.maxPendingPerSender };
}

/**
 * The sender's window was full: park on a `nonce` wait until one of the sender's transactions is
 * mined (`releaseNonceWindow`) or `windowRecheckMs(attempt)` passes.
 */
async function waitForWindow(
  ctx: WorkflowContext,
  attempt: number,
  chainId: number,
  sender: ChainAddress,
  full: { pending: number; bound: number },
): Promise<void> {
  const signal = `nonce.window:${attempt}`;
  const { pending, bound } = full;
  const details: NonceWaitDetails = {
    chainId,
    sender,
    signal,
    pending,
    bound,
    reason: `${pending} transactions of ${sender} on chain ${chainId} are not mined yet (maxPendingPerSender ${bound})`,
  };
  ctx.progress({
    milestone: 1,
    stage: "waiting for the sender's pending transactions",
    nonceWindow: details,
  });
  await ctx.waitForSignal(signal, {
    schema: z.unknown(),
    timeout: windowRecheckMs(attempt),
    presentAs: { kind: "nonce", name: nonceWindowKey(chainId, sender), details: { ...details } },
  });
}

/**
 * Once the run's transaction is mined its nonce leaves the window: wake the sender's longest
 * waiting run, if any (journaled as a step, so a replay wakes nobody again).
 */
export async function releaseNonceWindow(
  ctx: WorkflowContext,
  chainId: number,
  sender: ChainAddress,
): Promise<void> {
  await ctx.step("nonce.window.release", () =>
    ctx.service(chainAccessService).openNonceWindow({ chainId, sender, slots: 1 }),
  );
}

import type { Pool } from "pg";
import type { ExecutionClient } from "../engine/execution-client.js";
import { addressText } from "../values/address.js";
import { storeNonceWindowWakes } from "./store/pg-nonce-window.js";

/** The key of a sender's nonce window: the nonce entity's key, `<chainId>:<sender>`. */
export function nonceWindowKey(chainId: number, sender: string): string {
  return `${chainId}:${addressText(sender)}`;
}

/**
 * Wakes up to `slots` runs waiting for the sender's full nonce window (docs/chains.md, "Pending
 * transactions per sender"), longest waiting first: a run calls it once its own transaction is
 * mined, which frees one place. A woken run asks for a nonce again; one that finds the window
 * still full waits again. The wake signals are stored in one statement that skips runs already
 * woken and runs a concurrent release is waking (`storeNonceWindowWakes`), then their jobs are
 * woken through `signalMany` with the same idempotency keys (stored already, so it stores nothing
 * and wakes). No wait is signalled twice. A repeated call (a step replayed after a crash) may wake
 * one run more than the release freed: that run finds the window full and waits again, a turn
 * spent, never a nonce. Resolves with how many were woken.
 */
export async function openNonceWindow(
  deps: { pool: Pool; executions: Pick<ExecutionClient, "signalMany"> },
  window: { chainId: number; sender: string; slots: number },
): Promise<number> {
  const key = nonceWindowKey(window.chainId, window.sender);
  const waiters = await storeNonceWindowWakes(deps.pool, key, window.slots);
  if (waiters.length === 0) return 0;
  await deps.executions.signalMany(
    waiters.map((waiter) => ({
      executionId: waiter.executionId,
      name: waiter.signal,
      payload: {},
      idempotencyKey: waiter.idempotencyKey,
    })),
  );
  return waiters.length;
}

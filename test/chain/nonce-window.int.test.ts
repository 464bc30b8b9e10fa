import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { windowRecheckMs } from "../../src/chain/lifecycle/nonce-reservation.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { waitUntil } from "../support/processes.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * A sender's pending transactions are bounded per chain (docs/chains.md, "Pending transactions per
 * sender"): with `maxPendingPerSender` 2 and blocks mined only on demand, five writes of one
 * sender put at most two transactions in the node's mempool at a time; the others wait, kind
 * `nonce`, saying why, and are woken as blocks mine the first ones. Nonces stay contiguous.
 */

const BOUND = 2;
const WRITES = 5;
let world: ChainWorld;
const sender = privateKeyToAccount(ANVIL_KEYS[5]).address;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    anvil: { automine: false },
    chain: { maxPendingPerSender: BOUND },
    signers: { windowed: 5 },
  });
});
afterAll(async () => {
  await world?.stop();
});

describe("maxPendingPerSender", () => {
  it("keeps at most the bound unmined, parks the rest with a reason, and wakes them as blocks mine", async () => {
    const first = await world.anvil.public.getTransactionCount({ address: sender });
    const ids = await Promise.all(
      Array.from({ length: WRITES }, () =>
        world.send({ signerId: "windowed", to: recipient, valueWei: "1" }),
      ),
    );
    // Two in the mempool, three parked on the sender's window: nothing mines until asked.
    let seen = "";
    const parked = await waitUntil(
      "two writes submitted and three waiting for the window",
      async () => {
        const views = await Promise.all(ids.map((id) => world.engine.client.view(id)));
        seen = JSON.stringify(
          views.map((v) => [v.status, v.progress?.stage, v.waitingFor?.[0]?.kind, v.failure]),
        );
        const submitted = views.filter((v) => v.progress?.stage === "submitted");
        const waiting = views.filter((v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "nonce");
        return submitted.length === BOUND && waiting.length === WRITES - BOUND ? waiting : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the writes (status, stage, wait, failure): ${seen}`);
    });
    const wait = parked[0]?.waitingFor?.[0];
    expect(wait).toMatchObject({
      kind: "nonce",
      name: `${world.anvil.chainId}:${sender.toLowerCase()}`,
      details: {
        chainId: world.anvil.chainId,
        pending: BOUND,
        bound: BOUND,
        reason: expect.stringContaining(`(maxPendingPerSender ${BOUND})`),
      },
    });
    const pendingNow = await world.anvil.public.getTransactionCount({ address: sender, blockTag: "pending" });
    expect(pendingNow - first).toBe(BOUND);

    // Unwoken (nothing mines), a waiter asks again by itself, each time later than the last: its
    // third wait (attempt 2) is due 8 s after it began (a fixed recheck would ask every 2 s, and
    // thousands of waiters would fill the runner's queue with their turns). A pending wait records
    // its deadline; half the recheck leaves room for a slow journal write.
    const waiter = parked[0]?.id as string;
    const third = await waitUntil(
      "a waiter's third wait on the window",
      async () => {
        const { rows } = await world.engine.pool.query<{ deadline: string; started: Date }>(
          `SELECT result->>'deadline' AS deadline, started_at AS started FROM journal_entries
            WHERE execution_id = $1 AND kind = 'signal' AND name = 'nonce.window:2' AND state = 'pending'`,
          [waiter],
        );
        return rows[0];
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(Date.parse(third.deadline) - third.started.getTime()).toBeGreaterThanOrEqual(
      windowRecheckMs(2) / 2,
    );
    expect([0, 1, 2].map(windowRecheckMs)).toEqual([2_000, 4_000, 8_000]);

    // Each block mines what is pending; the window never holds more than the bound.
    let mostPending = BOUND;
    const views = await waitUntil(
      "every write settled",
      async () => {
        const all = await Promise.all(ids.map((id) => world.engine.client.view(id)));
        if (all.every((v) => v.status === "completed" || v.status === "failed")) return all;
        const [pending, mined] = await Promise.all([
          world.anvil.public.getTransactionCount({ address: sender, blockTag: "pending" }),
          world.anvil.public.getTransactionCount({ address: sender, blockTag: "latest" }),
        ]);
        mostPending = Math.max(mostPending, pending - mined);
        await world.anvil.mine(1);
        return undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    expect(mostPending).toBeLessThanOrEqual(BOUND);
    expect(views.map((v) => [v.status, (v.output as { verdict?: string } | null)?.verdict])).toEqual(
      ids.map(() => ["completed", "confirmed"]),
    );
    const nonces = views.map((v) => (v.output as { nonce: number }).nonce).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: WRITES }, (_, i) => first + i));
    expect(await world.anvil.public.getTransactionCount({ address: sender })).toBe(first + WRITES);
  }, 150_000);
});

import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANVIL_KEYS } from "../support/anvil.js";
import { waitUntil } from "../support/processes.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * A payer drained while its transaction waits in the mempool (docs/chains.md, "Funding"): the node
 * drops the pending transaction its sender can no longer pay for, the lifecycle finds it stuck and
 * replaces it, the node refuses the replacement for insufficient funds, and the write waits for
 * funding instead of suspending; funded, the replacement is broadcast and mined, once. Anvil mines
 * only when the test says.
 */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;
const payer = privateKeyToAccount(ANVIL_KEYS[4]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    anvil: { automine: false },
    chain: { fees: { stuckAfterMs: 1_500, maxBumps: 10 } },
    signers: { payer: 4 },
  });
});
afterAll(async () => {
  await world?.stop();
});

describe("a payer drained with its transaction in the mempool", () => {
  it("waits for funding when the replacement is refused, then mines one transaction for the intent", async () => {
    await world.anvil.test.setBalance({ address: payer, value: parseEther("1") });
    const nonceBefore = await world.anvil.public.getTransactionCount({ address: payer });
    const deadline = new Date(Date.now() + 120_000).toISOString();
    const id = await world.send({
      signerId: "payer",
      to: recipient,
      valueWei: "11",
      fundingDeadline: deadline,
    });
    await world.engine.waitForView(
      id,
      (v) => v.progress?.stage === "submitted",
      "the first attempt submitted",
    );

    // Drained with the attempt pending: the next block drops it instead of mining it.
    await world.anvil.test.setBalance({ address: payer, value: 0n });
    await world.anvil.mine(1);
    const waiting = await world.engine.waitForView(
      id,
      (v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "funding",
      "a funding wait after a refused replacement",
      60_000,
    );
    const details = (waiting.waitingFor?.[0]?.details ?? {}) as Record<string, unknown>;
    expect(details).toMatchObject({
      destination: { kind: "balance", address: payer },
      availableWei: "0",
      deadline,
      refusedStep: expect.stringMatching(/^broadcast:[1-9]\d*$/),
    });
    expect(waiting.progress).toMatchObject({ milestone: 2, stage: "waiting for gas funding" });

    await world.anvil.test.setBalance({ address: payer, value: parseEther("1") });
    // Blocks as the write needs them: its replacement, then the finality depth.
    const view = await waitUntil(
      "the write settled",
      async () => {
        const v = await world.engine.client.view(id);
        if (v.status === "completed" || v.status === "failed") return v;
        await world.anvil.mine(1);
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    const output = view.output as { hash: string; nonce: number; attempts: number };
    expect(output).toMatchObject({ nonce: nonceBefore });
    expect(output.attempts).toBeGreaterThan(1);
    expect(output.hash).toBe(details.refusedHash);
    // One mined transaction for the intent.
    expect(await world.anvil.public.getTransactionCount({ address: payer })).toBe(nonceBefore + 1);
  });
});

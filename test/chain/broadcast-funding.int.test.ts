import { type Address, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * A payer drained after `funding.check` passed (docs/chains.md, "Funding"): the node refuses the
 * broadcast for insufficient funds, and the write waits for funding like a payer short before the
 * check, instead of suspending. The drain happens exactly between the check and the broadcast: an
 * engine hook empties the payer when `broadcast:0` is about to run.
 */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;
const payer = privateKeyToAccount(ANVIL_KEYS[4]).address;
/** The step before which the hook drains `payer`, once; null when disarmed. */
let drainBefore: string | null = null;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    signers: { payer: 4 },
    hooks: {
      async beforeStep({ step }) {
        if (step !== drainBefore) return;
        drainBefore = null;
        await world.anvil.test.setBalance({ address: payer, value: 0n });
      },
    },
  });
});
afterAll(async () => {
  await world?.stop();
});

const fundingWait = (id: string) =>
  world.engine.waitForView(
    id,
    (v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "funding",
    "a funding wait",
  );

function waitOf(view: ExecutionView) {
  const wait = view.waitingFor?.[0];
  return { wait, details: (wait?.details ?? {}) as Record<string, unknown> };
}

describe("a payer drained between the funding check and the broadcast", () => {
  it("waits for funding naming the payer and the amount, then broadcasts the same bytes once", async () => {
    await world.anvil.test.setBalance({ address: payer, value: parseEther("1") });
    const nonceBefore = await world.anvil.public.getTransactionCount({ address: payer });
    const deadline = new Date(Date.now() + 120_000).toISOString();
    drainBefore = "broadcast:0";
    const id = await world.send({
      signerId: "payer",
      to: recipient,
      valueWei: "7",
      fundingDeadline: deadline,
    });

    const waiting = await fundingWait(id);
    const { wait, details } = waitOf(waiting);
    expect(wait).toMatchObject({ name: "gas", until: deadline });
    expect(details).toMatchObject({
      destination: { kind: "balance", address: payer },
      availableWei: "0",
      deadline,
      refusedStep: "broadcast:0",
    });
    const required = BigInt(String(details.requiredWei));
    expect(required).toBeGreaterThan(7n);
    expect(details.shortfallWei).toBe(required.toString());
    expect(waiting.progress).toMatchObject({ stage: "waiting for gas funding" });
    // The refusal is journaled once (after the node-lag retries), never a second signature.
    const journal = await world.engine.client.journal(id);
    const refused = journal.find((e) => e.name === "broadcast:0");
    expect(refused?.result).toMatchObject({ refused: "insufficient-funds", availableWei: "0" });
    expect(journal.filter((e) => e.name.startsWith("sign:"))).toHaveLength(1);

    // Less than required leaves it waiting; enough resumes it.
    await world.anvil.test.setBalance({ address: payer, value: required - 1n });
    await world.anvil.test.setBalance({ address: payer, value: required });
    const view = await world.settled(id);
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    expect(view.output).toMatchObject({ verdict: "confirmed", nonce: nonceBefore, attempts: 1, from: payer });
    const hash = (view.output as { hash: `0x${string}` }).hash;
    expect(hash).toBe(details.refusedHash);
    // One mined transaction for the intent, at the reserved nonce: the sender's nonce moved by one.
    expect(await world.anvil.public.getTransactionCount({ address: payer })).toBe(nonceBefore + 1);
    const names = (await world.engine.client.journal(id)).map((e) => e.name);
    expect(names).toContain("broadcast:0:funded:1");
  });

  it("fails GAS_REQUIRED (rejected) naming payer and amount when the write may not wait", async () => {
    await world.anvil.test.setBalance({ address: payer, value: parseEther("1") });
    drainBefore = "broadcast:0";
    const id = await world.send({ signerId: "payer", to: recipient, valueWei: "7" });
    const view = await world.settled(id);
    expect(view.status).toBe("failed");
    expect(view.failure).toMatchObject({
      code: "GAS_REQUIRED",
      details: {
        verdict: "rejected",
        destination: { kind: "balance", address: payer as Address },
        availableWei: "0",
        refusedStep: "broadcast:0",
      },
    });
  });
});

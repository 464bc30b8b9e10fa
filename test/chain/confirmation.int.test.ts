import { type Hex, keccak256, parseTransaction } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * Confirmation depth, reorgs and stuck transactions, on an anvil that mines only when told to
 * (automine off), with finality at depth 2.
 */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    anvil: { automine: false },
    chain: { finality: { depth: 2 }, fees: { stuckAfterMs: 400, maxBumps: 1, bumpPercent: 12.5 } },
    signers: { bumper: 5, older: 6 },
  });
});
afterAll(async () => {
  await world?.stop();
});

const waitingOn = (stage: string) => (v: ExecutionView) =>
  v.status === "waiting" && v.waitingFor?.[0]?.kind === "confirmation" && v.waitingFor[0].name === stage;

describe("confirmation watcher", () => {
  it("waits for the finality depth, and a reorg that drops the receipt sends it back to waiting for inclusion", async () => {
    const id = await world.send({ to: recipient, valueWei: "11" });
    const submitted = await world.engine.waitForView(id, (v) => v.progress?.milestone === 2, "submitted");
    const hash = submitted.progress?.hash as Hex;
    await world.anvil.mine(1);
    await world.engine.waitForView(id, waitingOn("finality"), "waiting for finality");
    expect((await world.engine.client.view(id)).progress).toMatchObject({ milestone: 3, stage: "included" });
    // The block holding the receipt is replaced by an empty one: the receipt is gone.
    await world.anvil.test.request({ method: "anvil_reorg", params: [1, []] } as never);
    const back = await world.engine.waitForView(id, waitingOn("inclusion"), "back to waiting for inclusion");
    expect(back.progress).toMatchObject({ milestone: 2, hash });
    // The same signed bytes were broadcast again: mining includes them, depth 2 makes them final.
    await world.anvil.mine(1);
    await world.engine.waitForView(id, waitingOn("finality"), "included again");
    await world.anvil.mine(1);
    const view = await world.settled(id);
    expect(view.output).toMatchObject({ verdict: "confirmed", hash, attempts: 1 });
  });

  it("replaces a stuck transaction with both fees bumped ≥ 12.5 % and shows the operator when out of bumps", async () => {
    const id = await world.send({ signerId: "bumper", to: recipient, valueWei: "12" });
    const first = (await world.engine.waitForView(id, (v) => v.progress?.attempts === 1, "first attempt"))
      .progress?.hash as Hex;
    const stuck = await world.engine.waitForView(
      id,
      (v) => waitingOn("inclusion")(v) && v.waitingFor?.[0]?.details?.operatorAttention !== undefined,
      "an operator-attention wait",
    );
    expect(stuck.waitingFor?.[0]?.details).toMatchObject({ operatorAttention: { code: "TX_STUCK" } });
    const hashes = stuck.waitingFor?.[0]?.details?.hashes as Hex[];
    expect(hashes).toHaveLength(2);
    // Both signed payloads are in the journal (the first was replaced in the node's pool).
    const journal = await world.engine.client.journal(id);
    const signed = (name: string) =>
      parseTransaction((journal.find((e) => e.name === name)!.result as { raw: Hex }).raw);
    const [a, b] = [signed("sign:0"), signed("sign:1")];
    expect(a.nonce).toBe(b.nonce);
    expect((b.maxFeePerGas ?? 0n) * 1000n).toBeGreaterThanOrEqual((a.maxFeePerGas ?? 0n) * 1125n);
    expect((b.maxPriorityFeePerGas ?? 0n) * 1000n).toBeGreaterThanOrEqual(
      (a.maxPriorityFeePerGas ?? 0n) * 1125n,
    );
    expect(b.data).toBe(a.data);
    expect(hashes[0]).toBe(first);
    expect(keccak256((journal.find((e) => e.name === "sign:1")!.result as { raw: Hex }).raw)).toBe(hashes[1]);
    await world.anvil.mine(2);
    const view = await world.settled(id);
    expect(view.output).toMatchObject({ verdict: "confirmed", hash: hashes[1], attempts: 2 });
  });

  it("confirms with an older attempt's hash when the replaced attempt is the one mined", async () => {
    const sender = privateKeyToAccount(ANVIL_KEYS[6]).address;
    const nonceBefore = await world.anvil.public.getTransactionCount({ address: sender });
    const id = await world.send({ signerId: "older", to: recipient, valueWei: "13" });
    // Out of bumps after one replacement: the wait watches both hashes and never bumps again.
    const stuck = await world.engine.waitForView(
      id,
      (v) => waitingOn("inclusion")(v) && v.waitingFor?.[0]?.details?.operatorAttention !== undefined,
      "both attempts broadcast",
    );
    const [older, newer] = (stuck.waitingFor?.[0]?.details?.hashes ?? []) as Hex[];
    const journal = await world.engine.client.journal(id);
    const olderRaw = (journal.find((e) => e.name === "sign:0")!.result as { raw: Hex }).raw;
    // The node holds the replacement; a peer that never saw it mines the original instead.
    expect((await world.anvil.public.getTransaction({ hash: newer as Hex })).hash).toBe(newer);
    await world.anvil.test.dropTransaction({ hash: newer as Hex });
    await world.anvil.public.sendRawTransaction({ serializedTransaction: olderRaw });
    await world.anvil.mine(2);
    const view = await world.settled(id);
    expect(view.output).toMatchObject({ verdict: "confirmed", hash: older, attempts: 2, nonce: nonceBefore });
    const mined = await world.anvil.public.getTransactionReceipt({ hash: older as Hex });
    expect(mined.status).toBe("success");
    await expect(world.anvil.public.getTransactionReceipt({ hash: newer as Hex })).rejects.toThrow();
    // Exactly one transaction of the intent was mined.
    expect(await world.anvil.public.getTransactionCount({ address: sender })).toBe(nonceBefore + 1);
  });
});

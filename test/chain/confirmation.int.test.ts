import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * Confirmation depth and reorgs, on an anvil that mines only when told to (automine off), with
 * finality at depth 2 and the default stuck rule (30 s), so no fee bump races the test's clock.
 * Stuck transactions and their replacements: fee-bumps.int.test.ts.
 */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    anvil: { automine: false },
    chain: { finality: { depth: 2 } },
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
});

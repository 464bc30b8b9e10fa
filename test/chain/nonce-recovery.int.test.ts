import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nonceRecoverySchedule } from "../../src/chain/nonce-recovery.js";
import { nonceGapFills } from "../../src/chain/store/pg-nonce-gaps.js";
import type { ScheduleRunContext } from "../../src/schedules/schedule-definition.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * The nonce-recovery schedule on a real anvil: a write that fails after reserving its nonce leaves
 * a gap every later write of the sender waits behind; the schedule's run fills it with a
 * zero-value self-transfer at exactly that nonce, once, however often (or concurrently) it runs.
 */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({ file: import.meta.url });
});
afterAll(async () => {
  await world?.stop();
});

const runContext = (): ScheduleRunContext => ({
  window: new Date(),
  firedAt: new Date(),
  attempt: 1,
  logger: world.engine.logger,
});

describe("nonce recovery", () => {
  it("fills the nonce of a failed intent with one self-transfer, so later writes confirm", async () => {
    // Below the intrinsic 21000 gas: the node refuses it after nonce 0 was reserved and signed.
    const failed = await world.send({ to: recipient, valueWei: "1", gasLimit: "20000" });
    const failedView = await world.settled(failed);
    expect(failedView.failure, JSON.stringify(failedView)).toMatchObject({ code: "TX_REFUSED" });

    // The next write takes nonce 1 and is broadcast, but cannot be mined behind the gap.
    const later = await world.send({ to: recipient, valueWei: "2" });
    await world.engine.waitForView(
      later,
      (v) => v.status === "waiting" && (v.progress as { milestone?: number })?.milestone === 2,
      "the later write submitted",
    );
    expect(await world.anvil.public.getTransactionCount({ address: world.hot })).toBe(0);

    const schedule = nonceRecoverySchedule(
      { pool: world.engine.pool, chains: world.chains, signers: world.signers },
      60_000,
    );
    // Two runs at once (two runners in a hand-over): one signed fill between them.
    const [first, second] = await Promise.all([schedule.run(runContext()), schedule.run(runContext())]);
    expect(first.outcome).toBe("succeeded");
    expect(second.outcome).toBe("succeeded");

    const fills = await nonceGapFills(world.engine.pool, world.anvil.chainId, world.hot);
    expect(fills).toHaveLength(1);
    const fill = fills[0] as { nonce: number; hash: `0x${string}` };
    expect(fill.nonce).toBe(0);
    const tx = await world.anvil.public.getTransaction({ hash: fill.hash });
    expect(tx).toMatchObject({
      from: world.hot.toLowerCase(),
      to: world.hot.toLowerCase(),
      value: 0n,
      nonce: 0,
    });

    const laterView = await world.settled(later);
    expect(laterView.output).toMatchObject({ verdict: "confirmed", nonce: 1 });

    // A further run finds the chain past the gap (unless the slower concurrent run already did):
    // settled, nothing signed or sent.
    const third = await schedule.run(runContext());
    expect(third.summary).toMatchObject({ filled: 0, failed: 0 });
    expect(await nonceGapFills(world.engine.pool, world.anvil.chainId, world.hot)).toEqual([
      { nonce: 0, hash: fill.hash, settled: true },
    ]);
    // Exactly two transactions of the sender on chain: the fill (nonce 0) and the later write (nonce 1).
    expect(await world.anvil.public.getTransactionCount({ address: world.hot })).toBe(2);
    expect((await schedule.run(runContext())).outcome).toBe("empty");
  });
});

import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClaimsWorld, ISSUER, someClaims, startClaimsWorld } from "./support/claims-world.js";

/**
 * kill -9 of a real runner process in the middle of a claim batch — after a write's broadcast and
 * before its checkpoint — then a fresh runner: every claim is on chain exactly once and the result
 * accounts for each of them.
 */

let world: ClaimsWorld;
beforeAll(async () => {
  world = await startClaimsWorld(import.meta.url);
});
afterAll(async () => {
  await world?.stop();
});

describe("a runner killed inside a claim batch", () => {
  it("after the first write's broadcast: the next runner finishes, every claim once on chain", async () => {
    const registry = await world.deployRegistry();
    const claims = someClaims(5, 3, "crash");
    await world.addDirectly(registry, [claims[4]!]);
    const sentBefore = await world.anvil.public.getTransactionCount({ address: ISSUER });
    const marker = path.join(world.dir, "crashed-broadcast");
    const doomed = await world.startRunner({ step: "broadcast:0", marker });
    const id = await world.startBatch({
      chainId: world.anvil.chainId,
      registry,
      signerId: "issuer",
      claims,
      batchSize: 2,
      quorum: 2,
    });
    const wait = await world.approvalWait(id);
    await world.vote(id, "alice", "approve", wait.paramsHash).expect(202);
    await world.vote(id, "bob", "approve", wait.paramsHash).expect(202);
    const exit = await doomed.exit;
    expect(exit.signal).toBe("SIGKILL");
    // The broadcast reached the node before the process died.
    expect((await world.claimAddedEvents(registry)).length).toBe(3);

    await world.startRunner();
    const done = await world.settled(id, 60_000);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    const events = await world.claimAddedEvents(registry);
    expect(events.sort()).toEqual(claims.map((c) => `${c.subject.toLowerCase()}/3`).sort());
    const result = done.result as { written: number; alreadyPresent: number; claims: { outcome: string }[] };
    expect(result.claims.map((c) => c.outcome)).toEqual([
      "written",
      "written",
      "written",
      "written",
      "already-present",
    ]);
    // One lifecycle child per write that had something to send (the last batch had nothing).
    expect(await world.writesOf(id)).toBe(2);
    // Two transactions from the signer: the killed broadcast was not sent again.
    expect(await world.anvil.public.getTransactionCount({ address: ISSUER })).toBe(sentBefore + 2);
  }, 120_000);
});

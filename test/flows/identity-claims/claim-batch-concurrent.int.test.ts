import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntil } from "../../support/processes.js";
import {
  type ClaimInputRow,
  type ClaimsWorld,
  someClaims,
  startClaimsWorld,
} from "./support/claims-world.js";

/**
 * Two batches for one registry are not serialized (docs/identity-claims.md, "Two batches, one
 * registry"): when both read "missing" for the same claims and both send them, the contract adds
 * each claim once and the receipts tell the batches apart — one records it `written`, the other
 * `already-present`. Blocks are held back until both writes are pending, so the race is forced.
 */

let world: ClaimsWorld;
beforeAll(async () => {
  world = await startClaimsWorld(import.meta.url);
  await world.startRunner();
});
afterAll(async () => {
  await world?.stop();
});

async function approvedBatch(registry: Address, claims: readonly ClaimInputRow[]): Promise<string> {
  const id = await world.startBatch({
    chainId: world.anvil.chainId,
    registry,
    signerId: "issuer",
    claims,
    batchSize: 10,
    quorum: 2,
  });
  const wait = await world.approvalWait(id);
  await world.vote(id, "alice", "approve", wait.paramsHash).expect(202);
  await world.vote(id, "bob", "approve", wait.paramsHash).expect(202);
  return id;
}

interface Result {
  writes: { sent: number; written: number }[];
  claims: { subject: string; outcome: string; transaction: string | null; dataMatches: boolean }[];
}

describe("two batches racing for the same claims", () => {
  it("each claim lands once; exactly one batch records it written, the other already-present", async () => {
    const registry = await world.deployRegistry();
    const all = someClaims(6, 9, "race");
    const a = all.slice(0, 4);
    const b = all.slice(2, 6);
    await world.anvil.test.setAutomine(false);
    const ids = [await approvedBatch(registry, a), await approvedBatch(registry, b)];
    // Both writes were read as missing and sent before either is mined.
    await waitUntil(
      "both writes pending",
      async () =>
        (await world.anvil.public.getBlock({ blockTag: "pending" })).transactions.length === 2
          ? true
          : undefined,
      { timeoutMs: 30_000 },
    );
    await world.anvil.mine(1);
    await world.anvil.test.setAutomine(true);
    await world.anvil.mine(1);

    const results: Result[] = [];
    for (const id of ids) {
      const done = await world.settled(id, 60_000);
      expect(done.status, JSON.stringify(done)).toBe("completed");
      results.push(done.result as Result);
    }
    const events = await world.claimAddedEvents(registry);
    expect(events.sort()).toEqual(all.map((c) => `${c.subject.toLowerCase()}/9`).sort());
    for (const claim of all) {
      const seen = results.flatMap((r) =>
        r.claims.filter((c) => c.subject.toLowerCase() === claim.subject.toLowerCase()),
      );
      const written = seen.filter((c) => c.outcome === "written");
      expect(written, claim.subject).toHaveLength(1);
      expect(written[0]?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(seen.every((c) => c.dataMatches)).toBe(true);
    }
    // The overlap went out twice (both writes sent all four claims) and landed once.
    expect(results.map((r) => `sent ${r.writes[0]?.sent}, added ${r.writes[0]?.written}`).sort()).toEqual([
      "sent 4, added 2",
      "sent 4, added 4",
    ]);
  }, 90_000);
});

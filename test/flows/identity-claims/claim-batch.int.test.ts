import { type Address, encodeAbiParameters, getAddress, keccak256, stringToHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApprovalParams } from "../../../src/engine/approvals.js";
import {
  type ClaimInputRow,
  type ClaimsWorld,
  ISSUER,
  someClaims,
  startClaimsWorld,
} from "./support/claims-world.js";

/**
 * `identity.claim-batch` end to end: the Platform API (keys of distinct people), a real runner
 * process, the transaction lifecycle and a ClaimRegistry on anvil.
 */

let world: ClaimsWorld;
beforeAll(async () => {
  world = await startClaimsWorld(import.meta.url);
  await world.startRunner();
});
afterAll(async () => {
  await world?.stop();
});

function batchInput(
  registry: Address,
  claims: readonly ClaimInputRow[],
  extra: Record<string, unknown> = {},
) {
  return {
    chainId: world.anvil.chainId,
    registry,
    signerId: "issuer",
    claims,
    batchSize: 2,
    quorum: 2,
    ...extra,
  };
}

/** Counts per `subject/topic` of the registry's ClaimAdded events. */
async function eventCounts(registry: Address): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const key of await world.claimAddedEvents(registry)) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

const keyOf = (c: ClaimInputRow) => `${c.subject.toLowerCase()}/${c.topic}`;

describe("identity.claim-batch", () => {
  it("M-of-N by distinct people, bound to the claims' hash; a claim already on chain is recorded already-present and not written again", async () => {
    const registry = await world.deployRegistry();
    const claims = someClaims(5, 7, "quorum");
    // Someone else already added claims[1] (same data) and claims[3] (other data).
    await world.addDirectly(registry, [claims[1]!, { ...claims[3]!, data: "older document" }]);
    const id = await world.startBatch(batchInput(registry, claims));
    const wait = await world.approvalWait(id);
    const expectedHash = keccak256(
      encodeAbiParameters(
        [{ type: "address[]" }, { type: "uint256[]" }, { type: "bytes32[]" }],
        [
          claims.map((c) => getAddress(c.subject)),
          claims.map(() => 7n),
          claims.map((c) => keccak256(stringToHex(c.data))),
        ],
      ),
    );
    expect(wait).toMatchObject({
      quorum: 2,
      params: { registry, count: 5, claimsHash: expectedHash, signer: ISSUER, batchSize: 2, batches: 3 },
    });
    expect(wait.paramsHash).toBe(hashApprovalParams(wait.params));

    const self = await world.vote(id, "integratorApprover", "approve", wait.paramsHash);
    expect([self.status, self.body.code]).toEqual([403, "SELF_APPROVAL_FORBIDDEN"]);
    const otherParams = hashApprovalParams({ ...wait.params, count: 4 });
    const stale = await world.vote(id, "alice", "approve", otherParams);
    expect([stale.status, stale.body.code]).toEqual([409, "APPROVAL_PARAMS_CHANGED"]);
    const first = await world.vote(id, "alice", "approve", wait.paramsHash);
    expect(first.body).toMatchObject({ approvals: 1, quorum: 2, outcome: "pending" });
    // Alice's second key is still Alice: one person counts once.
    const again = await world.vote(id, "aliceAgain", "approve", wait.paramsHash);
    expect([again.status, again.body.code]).toEqual([409, "APPROVAL_DUPLICATE_VOTE"]);
    expect(await world.writesOf(id)).toBe(0);
    const second = await world.vote(id, "bob", "approve", wait.paramsHash);
    expect(second.body).toMatchObject({ approvals: 2, outcome: "approved" });

    const done = await world.settled(id, 60_000);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    const result = done.result as {
      written: number;
      alreadyPresent: number;
      approvedBy: string[];
      writes: { batch: number; sent: number; written: number; transaction: string | null }[];
      claims: { index: number; outcome: string; transaction: string | null; dataMatches: boolean }[];
    };
    expect(result).toMatchObject({ written: 3, alreadyPresent: 2, approvedBy: ["alice", "bob"] });
    expect(result.claims.map((c) => [c.index, c.outcome, c.dataMatches])).toEqual([
      [0, "written", true],
      [1, "already-present", true],
      [2, "written", true],
      [3, "already-present", false],
      [4, "written", true],
    ]);
    expect(result.writes.map((w) => [w.batch, w.sent, w.written])).toEqual([
      [0, 1, 1],
      [1, 1, 1],
      [2, 1, 1],
    ]);
    // Exactly one ClaimAdded per claim: the two direct ones and the three of the batch.
    const counts = await eventCounts(registry);
    expect(claims.map((c) => counts.get(keyOf(c)))).toEqual([1, 1, 1, 1, 1]);
    expect(await world.writesOf(id)).toBe(3);
    expect(done.progress).toMatchObject({ phase: "writing", batch: 3, batches: 3, done: 5, total: 5 });
  });

  it("a rejection ends the batch APPROVAL_REJECTED with the rejecter and reason, and writes nothing", async () => {
    const registry = await world.deployRegistry();
    const id = await world.startBatch(batchInput(registry, someClaims(3, 1, "rejected")));
    const wait = await world.approvalWait(id);
    expect((await world.vote(id, "alice", "approve", wait.paramsHash)).body.outcome).toBe("pending");
    const no = await world.vote(id, "bob", "reject", wait.paramsHash, "wrong subjects");
    expect(no.body.outcome).toBe("rejected");
    const done = await world.settled(id);
    expect(done.status).toBe("failed");
    expect(done.failure).toMatchObject({
      code: "APPROVAL_REJECTED",
      details: { rejectedBy: "bob", reason: "wrong subjects", registry },
    });
    expect(await world.writesOf(id)).toBe(0);
    expect(await world.claimAddedEvents(registry)).toEqual([]);
  });

  it("an approval past its deadline ends the batch APPROVAL_EXPIRED and writes nothing", async () => {
    const registry = await world.deployRegistry();
    const id = await world.startBatch(
      batchInput(registry, someClaims(2, 1, "expired"), { approvalTimeout: "2s", quorum: 1 }),
    );
    await world.approvalWait(id);
    const done = await world.settled(id);
    expect(done.status).toBe("failed");
    expect(done.failure).toMatchObject({
      code: "APPROVAL_EXPIRED",
      details: { registry, approvalTimeout: "2s" },
    });
    expect(await world.writesOf(id)).toBe(0);
    expect(await world.claimAddedEvents(registry)).toEqual([]);
  });

  it("refuses, before asking anyone, a registry the organisation's signer may not write, a platform signer and an address without a registry", async () => {
    const foreign = await world.deployRegistry("0x000000000000000000000000000000000000dEaD");
    const cases: [Record<string, unknown>, string][] = [
      [{ registry: foreign }, "CLAIM_REGISTRY_NOT_WRITABLE"],
      [{ registry: foreign, signerId: "platform" }, "CLAIM_SIGNER_NOT_ORGANISATION"],
      [{ registry: "0x00000000000000000000000000000000000c1a1d" }, "CLAIM_REGISTRY_NOT_FOUND"],
      [{ registry: await world.deployToken() }, "CLAIM_REGISTRY_INVALID"],
    ];
    for (const [override, code] of cases) {
      const id = await world.startBatch({ ...batchInput(foreign, someClaims(1, 1, code)), ...override });
      const done = await world.settled(id);
      expect([done.status, (done.failure as { code: string }).code], JSON.stringify(done)).toEqual([
        "failed",
        code,
      ]);
      expect(await world.writesOf(id)).toBe(0);
    }
    // The organisation comes from the key: another organisation's integrator cannot use acme's signer.
    const registry = await world.deployRegistry();
    const id = await world.startBatch(batchInput(registry, someClaims(1, 1, "outsider")), "outsider");
    const done = await world.settled(id, undefined, "outsider");
    expect((done.failure as { code: string }).code).toBe("SIGNER_UNKNOWN");
  });

  it("refuses invalid input with 422 INPUT_INVALID, one error per field naming index, value and rule", async () => {
    const registry = await world.deployRegistry();
    const good = someClaims(2, 1, "invalid");
    const res = await world
      .as("integrator")
      .post("/v1/workflows/identity.claim-batch/executions")
      .send(
        batchInput(registry, [
          good[0]!,
          { subject: "0x1234", topic: 1, data: "x" },
          { subject: good[1]!.subject, topic: "-3", data: "" },
        ]),
      );
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("INPUT_INVALID");
    const byPointer = Object.fromEntries(
      (res.body.errors as { pointer: string; message: string }[]).map((e) => [e.pointer, e.message]),
    );
    expect(byPointer["body.claims.1.subject"]).toMatch(/"0x1234" must be a 0x-prefixed 20-byte hex address/);
    expect(byPointer["body.claims.2.topic"]).toMatch(/"-3" must be an integer from 0 to 2\^256-1/);
    expect(byPointer["body.claims.2.data"]).toMatch(/must not be empty/);
  });
});

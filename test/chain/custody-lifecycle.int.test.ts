import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANVIL_KEYS } from "../support/anvil.js";
import { waitUntil } from "../support/processes.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/** The lifecycle with custody signers, against the loopback custody simulator and a real anvil. */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({ file: import.meta.url, custody: true });
});
afterAll(async () => {
  await world?.stop();
});

const sim = () => world.custody!;

describe("custody path of the lifecycle", () => {
  it("waits for the provider's approval, then confirms with the provider's hash and no Tenor nonce", async () => {
    const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
    await waitUntil(
      "the intent to reach the provider",
      () => sim().intent(id)?.status === "pending_approval",
    );
    await sim().approve(id);
    const view = await world.settled(id);
    expect(view.output).toMatchObject({ verdict: "confirmed", nonce: null, hash: sim().intent(id)?.txHash });
  });

  it("ends rejected with the provider's reason, never left waiting", async () => {
    const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
    await waitUntil("pending", () => sim().intent(id)?.status === "pending_approval");
    sim().reject(id, "travel rule check failed");
    const view = await world.settled(id);
    expect(view.failure).toMatchObject({
      code: "CUSTODY_REJECTED",
      details: { reason: "travel rule check failed", verdict: "rejected" },
    });
  });

  it("recovers a confirmed transaction whose submit response was lost, by its external id", async () => {
    sim().setDefaultMode("loseSubmitResponse");
    try {
      const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.output).toMatchObject({ verdict: "confirmed", hash: sim().intent(id)?.txHash });
      expect(
        sim()
          .intents()
          .filter((i) => i.externalId.startsWith(id)),
      ).toHaveLength(1);
    } finally {
      sim().setDefaultMode("normal");
    }
  });

  it("detects an organisation-scoped intent the provider dropped and submits it again in the same execution", async () => {
    sim().setDefaultMode("drop");
    const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
    await waitUntil("the dropped intent", () => sim().intent(id)?.status === "approved");
    sim().setDefaultMode("autoApprove");
    try {
      const view = await world.settled(id);
      expect(view.output).toMatchObject({ verdict: "confirmed", hash: sim().intent(`${id}:r1`)?.txHash });
      expect(sim().intent(id)?.txHash).toBeUndefined();
    } finally {
      sim().setDefaultMode("normal");
    }
  });

  it("ends a dropped platform-scoped intent at the poll budget with a clear code", async () => {
    sim().setDefaultMode("drop");
    try {
      const id = await world.send({ signerId: "platform-vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.failure).toMatchObject({
        code: "CUSTODY_POLL_BUDGET_EXHAUSTED",
        details: { verdict: "expired", lastStatus: "approved" },
      });
      expect(
        sim()
          .intents()
          .filter((i) => i.externalId.startsWith(id)),
      ).toHaveLength(1);
    } finally {
      sim().setDefaultMode("normal");
    }
  });

  it("rides out 5xx answers: the intent is reconciled and submitted once", async () => {
    sim().setDefaultMode("autoApprove");
    sim().failNext(2, 503);
    try {
      const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.output).toMatchObject({ verdict: "confirmed" });
      expect(
        sim()
          .intents()
          .filter((i) => i.externalId.startsWith(id)),
      ).toHaveLength(1);
    } finally {
      sim().setDefaultMode("normal");
    }
  });

  /** The provider's states as the lifecycle read them, in journal order. */
  async function statesRead(id: string): Promise<string[]> {
    const journal = await world.engine.client.journal(id);
    return journal
      .filter((e) => /^custody\.(submit|status):/.test(e.name))
      .map((e) => (e.result as { status: string }).status);
  }

  it("confirms when the provider skips states: pending approval straight to confirmed", async () => {
    sim().setDefaultMode("skipToConfirmed");
    try {
      const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.output).toMatchObject({
        verdict: "confirmed",
        nonce: null,
        hash: sim().intent(id)?.txHash,
      });
      const states = await statesRead(id);
      expect(states.at(-1)).toBe("confirmed");
      expect(states.slice(0, -1).every((s) => s === "pending_approval")).toBe(true);
      expect(
        sim()
          .intents()
          .filter((i) => i.externalId.startsWith(id)),
      ).toHaveLength(1);
    } finally {
      sim().setDefaultMode("normal");
    }
  });

  it("confirms when the provider's answers arrive out of order (approved, then pending again, broadcast after confirmed)", async () => {
    sim().setDefaultMode("outOfOrder");
    try {
      const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.output).toMatchObject({
        verdict: "confirmed",
        nonce: null,
        hash: sim().intent(id)?.txHash,
      });
      const states = await statesRead(id);
      expect(states.slice(0, 2)).toEqual(["approved", "pending_approval"]);
      expect(states.at(-1)).toBe("confirmed");
      // The hash is taken from the first answer that carries one; a stale `broadcast` after it
      // changes nothing: the chain's receipt decided the verdict.
      expect(
        sim()
          .intents()
          .filter((i) => i.externalId.startsWith(id)),
      ).toHaveLength(1);
    } finally {
      sim().setDefaultMode("normal");
    }
  });
});

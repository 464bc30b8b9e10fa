import request from "supertest";
import { encodeDeployData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestToken } from "../../src/chain/contracts/artifacts.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { waitUntil } from "../support/processes.js";
import { type ChainWorld, chainWorldApi, integratorKeys, startChainWorld } from "./support/chain-world.js";

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

/** Runs `body` with the simulator answering in `mode`, then puts it back to normal. */
async function inMode(
  mode: Parameters<ReturnType<typeof sim>["setDefaultMode"]>[0],
  body: () => Promise<void>,
) {
  sim().setDefaultMode(mode);
  try {
    await body();
  } finally {
    sim().setDefaultMode("normal");
  }
}

/** The provider holds exactly one intent for execution `id`: it was submitted once. */
function expectSubmittedOnce(id: string): void {
  expect(
    sim()
      .intents()
      .filter((i) => i.externalId.startsWith(id)),
  ).toHaveLength(1);
}

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
    await inMode("loseSubmitResponse", async () => {
      const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.output).toMatchObject({ verdict: "confirmed", hash: sim().intent(id)?.txHash });
      expectSubmittedOnce(id);
    });
  });

  it("detects an organisation-scoped intent the provider dropped and submits it again in the same execution", async () => {
    sim().setDefaultMode("drop");
    const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
    await waitUntil("the dropped intent", () => sim().intent(id)?.status === "approved");
    await inMode("autoApprove", async () => {
      const view = await world.settled(id);
      expect(view.output).toMatchObject({ verdict: "confirmed", hash: sim().intent(`${id}:r1`)?.txHash });
      expect(sim().intent(id)?.txHash).toBeUndefined();
    });
  });

  it("ends a dropped platform-scoped intent at the poll budget with a clear code", async () => {
    await inMode("drop", async () => {
      const id = await world.send({ signerId: "platform-vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.failure).toMatchObject({
        code: "CUSTODY_POLL_BUDGET_EXHAUSTED",
        details: { verdict: "expired", lastStatus: "approved" },
      });
      expectSubmittedOnce(id);
    });
  });

  it("rides out 5xx answers: the intent is reconciled and submitted once", async () => {
    sim().setDefaultMode("autoApprove");
    sim().failNext(2, 503);
    try {
      const id = await world.send({ signerId: "vault", to: recipient, valueWei: "3" });
      const view = await world.settled(id);
      expect(view.output).toMatchObject({ verdict: "confirmed" });
      expectSubmittedOnce(id);
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
    await inMode("skipToConfirmed", async () => {
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
      expectSubmittedOnce(id);
    });
  });

  it("confirms when the provider's answers arrive out of order (approved, then pending again, broadcast after confirmed)", async () => {
    await inMode("outOfOrder", async () => {
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
      expectSubmittedOnce(id);
    });
  });

  it("ends reverted, not confirmed, when the provider reports as sent a call the chain reverted: the verdict is the receipt's", async () => {
    // Code that reverts on every call (PUSH1 0, PUSH1 0, REVERT).
    const reverting = "0x00000000000000000000000000000000000c0de5";
    await world.anvil.test.setCode({ address: reverting, bytecode: "0x60006000fd" });
    await inMode("unsimulated", async () => {
      const id = await world.send({ signerId: "vault", to: reverting, data: "0x12345678" });
      const view = await world.settled(id);
      expect(view.status, JSON.stringify(view.failure)).toBe("completed");
      const hash = sim().intent(id)?.txHash;
      expect(view.output).toMatchObject({ verdict: "reverted", nonce: null, hash });
      const states = await statesRead(id);
      expect(states.at(-1)).toMatch(/^(broadcast|confirmed)$/);
      expect((await world.anvil.public.getTransactionReceipt({ hash: hash as `0x${string}` })).status).toBe(
        "reverted",
      );
      expectSubmittedOnce(id);
    });
  });
});

describe("a contract deployment for a custody signer", () => {
  const initCode = encodeDeployData({
    abi: TestToken.abi,
    bytecode: TestToken.bytecode,
    args: ["Custody", "CST", 6],
  });

  it("through the transactions API: 400 REQUEST_INVALID naming body.signerId, for the organisation's and the platform's custody signers; nothing starts", async () => {
    const api = chainWorldApi(world);
    try {
      const { acme, globex } = await integratorKeys(api);
      const intentsBefore = sim().intents().length;
      const deploy = (key: string, signerId: string) =>
        request(api.app)
          .post(`/v1/chains/${world.anvil.chainId}/transactions`)
          .set("authorization", `Bearer ${key}`)
          .send({ signerId, data: initCode });
      for (const signerId of ["vault", "platform-vault"]) {
        const res = await deploy(acme, signerId);
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.code).toBe("REQUEST_INVALID");
        expect(res.body.errors).toEqual([
          {
            pointer: "body.signerId",
            message: `is custody signer ${signerId}, whose provider sends only calls with a callee: a deployment needs a local-key signer`,
          },
        ]);
      }
      const { rows } = await world.engine.pool.query(
        "SELECT count(*)::int AS n FROM executions WHERE input->>'signerId' LIKE '%vault' AND NOT input ? 'to'",
      );
      expect(rows[0].n).toBe(0);
      expect(sim().intents()).toHaveLength(intentsBefore);
      // Another organisation's custody signer is not named: the start fails SIGNER_UNKNOWN like any
      // signer that is not the caller's.
      const theirs = await deploy(globex, "vault");
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(202);
      const view = await world.settled(theirs.body.id as string);
      expect(view.failure).toMatchObject({ code: "SIGNER_UNKNOWN" });
      expect(sim().intents()).toHaveLength(intentsBefore);
    } finally {
      await api.close();
    }
  });

  it("started without the API, as a child is: refused alike, and a local signer's deployment without bytecode too", async () => {
    const custody = await world.settled(await world.send({ signerId: "vault", data: initCode }));
    expect(custody.failure).toMatchObject({
      code: "DEPLOYMENT_REFUSED",
      details: { field: "signerId", verdict: "rejected" },
    });
    const empty = await world.settled(await world.send({ signerId: "hot", data: "0x" }));
    expect(empty.failure).toMatchObject({
      code: "DEPLOYMENT_REFUSED",
      details: { field: "data", verdict: "rejected" },
    });
  });
});

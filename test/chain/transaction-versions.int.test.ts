import request from "supertest";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TransactionRequestV1 } from "../../src/chain/lifecycle/transaction-schemas.js";
import {
  chainTransactionV1,
  chainTransactionV2,
  chainTransactionV3,
  chainTransactionV4,
  chainTransactionV5,
} from "../../src/chain/lifecycle/transaction-workflow.js";
import { UNKNOWN_FIELD_RULE } from "../../src/engine/input-issues.js";
import type { createPlatformApi } from "../../src/roles/platform-api.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { newExecution } from "../support/new-execution.js";
import { type ChainWorld, chainWorldApi, integratorKeys, startChainWorld } from "./support/chain-world.js";

/**
 * `chain.transaction` versions (docs/chains.md, "The lifecycle"): version 2 takes the organisation
 * from the execution (the caller's key) and refuses one in its input; version 1, whose input named
 * it, stays registered so executions started on it finish on its code. Version 3 waits for funding
 * when the node refuses a broadcast for insufficient funds (test/chain/broadcast-funding.int.test.ts);
 * version 2 stays registered beside it. Version 5 reserves its nonce within the sender's window
 * (test/chain/nonce-window.int.test.ts); version 4 stays registered beside it. Version 6 parks a
 * run while its reservation queues (test/chain/nonce-park.int.test.ts); version 5, which awaits the
 * reply inside its turn, stays registered beside it.
 */

let world: ChainWorld;
let api: ReturnType<typeof createPlatformApi>;
let acmeKey: string;
let globexKey: string;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;
const globexSigner = privateKeyToAccount(ANVIL_KEYS[5]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    signers: { "globex-hot": { key: 5, orgId: "globex" } },
  });
  api = chainWorldApi(world);
  ({ acme: acmeKey, globex: globexKey } = await integratorKeys(api));
});
afterAll(async () => {
  await api?.close();
  await world?.stop();
});

const postTransaction = (key: string, body: object) =>
  request(api.app)
    .post(`/v1/chains/${world.anvil.chainId}/transactions`)
    .set("authorization", `Bearer ${key}`)
    .send(body);

async function rowOf(id: string): Promise<{ workflow_version: number; input: object; turn: number }> {
  const { rows } = await world.engine.pool.query(
    "SELECT workflow_version, input, turn FROM executions WHERE id = $1",
    [id],
  );
  return rows[0];
}

/** Inserts a version-1 execution as a runner of the previous release started it, and enqueues it. */
async function startVersion1(orgId: string, input: Record<string, unknown>): Promise<string> {
  const { summary } = await world.engine.store.createExecution(
    newExecution({
      workflow: chainTransactionV1.name,
      workflowVersion: 1,
      orgId,
      input: z.encode(TransactionRequestV1, TransactionRequestV1.parse(input)),
    }),
  );
  await world.engine.runner().queue.enqueue(summary.id, summary.workflow);
  return summary.id;
}

describe("chain.transaction version 6 (current)", () => {
  it("signs with a signer of the key's organisation; the input names no organisation", async () => {
    const res = await postTransaction(globexKey, { signerId: "globex-hot", to: recipient, valueWei: "5" });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const view = await world.settled(res.body.id);
    expect(view.output).toMatchObject({ verdict: "confirmed", from: globexSigner });
    const row = await rowOf(res.body.id);
    expect(row.workflow_version).toBe(6);
    const names = (await world.engine.client.journal(res.body.id)).map((e) => e.name);
    expect(names).toContain("nonce.send:0");
    expect(names).not.toContain("nonce.reserve:0");
    expect(row.input).not.toHaveProperty("orgId");
    // The same signer through another organisation's key is not theirs.
    const other = await postTransaction(acmeKey, { signerId: "globex-hot", to: recipient, valueWei: "5" });
    expect(other.status).toBe(202);
    expect((await world.settled(other.body.id)).failure).toMatchObject({ code: "SIGNER_UNKNOWN" });
  });

  it("refuses a body naming an organisation on both start routes, with the field and the rule", async () => {
    const body = { signerId: "hot", to: recipient, orgId: "globex" };
    const chainRoute = await postTransaction(acmeKey, body);
    expect(chainRoute.status).toBe(400);
    expect(chainRoute.body).toMatchObject({
      code: "REQUEST_INVALID",
      errors: [{ pointer: "body.orgId", message: UNKNOWN_FIELD_RULE }],
    });
    const workflowRoute = await request(api.app)
      .post("/v1/workflows/chain.transaction/executions")
      .set("authorization", `Bearer ${acmeKey}`)
      .send({ ...body, chainId: world.anvil.chainId });
    expect(workflowRoute.status).toBe(422);
    expect(workflowRoute.body).toMatchObject({
      code: "INPUT_INVALID",
      errors: [{ pointer: "body.orgId", message: UNKNOWN_FIELD_RULE }],
    });
    expect(workflowRoute.body.detail).toContain("orgId");
  });
});

describe("chain.transaction versions 2, 3, 4 and 5", () => {
  for (const workflow of [chainTransactionV2, chainTransactionV3, chainTransactionV4, chainTransactionV5]) {
    it(`an execution started on version ${workflow.version} runs on version ${workflow.version} and completes`, async () => {
      const { summary } = await world.engine.store.createExecution(
        newExecution({
          workflow: workflow.name,
          workflowVersion: workflow.version,
          orgId: "acme",
          input: { chainId: world.anvil.chainId, signerId: "hot", to: recipient, valueWei: "4" },
        }),
      );
      await world.engine.runner().queue.enqueue(summary.id, summary.workflow);
      const view = await world.settled(summary.id);
      expect(view.status, JSON.stringify(view.failure)).toBe("completed");
      expect(view.output).toMatchObject({ verdict: "confirmed", from: world.hot });
      expect((await rowOf(summary.id)).workflow_version).toBe(workflow.version);
    });
  }
});

describe("chain.transaction version 1", () => {
  it("an execution started on version 1 replays its own journal on version 1 and completes", async () => {
    const id = await startVersion1("acme", {
      orgId: "acme",
      chainId: world.anvil.chainId,
      signerId: "hot",
      to: recipient,
      valueWei: "3",
    });
    const view = await world.settled(id);
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    expect(view.output).toMatchObject({ verdict: "confirmed", from: world.hot });
    const row = await rowOf(id);
    expect(row.workflow_version).toBe(1);
    // It parked for its receipt: a later turn replayed the positions earlier turns journaled.
    expect(row.turn).toBeGreaterThan(1);
    const names = (await world.engine.client.journal(id)).map((e) => e.name);
    expect(names.slice(0, 2)).toEqual(["plan", "estimate"]);
  });

  it("still refuses an input naming another organisation than the execution's (SIGNER_UNKNOWN)", async () => {
    const id = await startVersion1("acme", {
      orgId: "globex",
      chainId: world.anvil.chainId,
      signerId: "hot",
      to: recipient,
    });
    const view = await world.settled(id);
    expect(view.failure).toMatchObject({ code: "SIGNER_UNKNOWN", details: { signer: "hot" } });
  });
});

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writeContract } from "../../flows/support/chain-writes.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import type { createPlatformApi } from "../../src/roles/platform-api.js";
import { runTenor } from "../cli/support/run-cli.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type ChainWorld, chainWorldApi, integratorKeys, startChainWorld } from "./support/chain-world.js";

/**
 * A parent shows its child's funding wait (docs/chains.md, "Funding"): a workflow whose write ran
 * dry between the funding check and the broadcast waits on a `child` wait that carries the child's
 * request (wallet, amounts, deadline), in the run view, the CLI and the console page.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

const payer = privateKeyToAccount(ANVIL_KEYS[6]).address;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

const payout = defineWorkflow({
  name: "test.funded-payout",
  version: 1,
  input: z.object({ chainId: z.number().int(), fundingDeadline: z.string() }),
  output: z.object({ hash: z.string() }),
  run: async (ctx, input) => {
    const written = await writeContract(ctx, "payout", {
      chainId: input.chainId,
      signerId: "payer",
      to: recipient,
      data: "0x",
      valueWei: "9",
      fundingDeadline: input.fundingDeadline,
    });
    return { hash: written.hash };
  },
});

let world: ChainWorld;
let api: ReturnType<typeof createPlatformApi>;
let server: Server;
let base: string;
let key: string;
let drainBefore: string | null = null;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    signers: { payer: 6 },
    workflows: [payout],
    hooks: {
      async beforeStep({ step }) {
        if (step !== drainBefore) return;
        drainBefore = null;
        await world.anvil.test.setBalance({ address: payer, value: 0n });
      },
    },
  });
  api = chainWorldApi(world);
  ({ acme: key } = await integratorKeys(api));
  server = api.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await api?.close();
  await world?.stop();
});

async function runView(id: string): Promise<Json> {
  const res = await request(api.app).get(`/v1/executions/${id}`).set("authorization", `Bearer ${key}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function consolePage(id: string): Promise<string> {
  const agent = request.agent(api.app);
  const signIn = await agent
    .post("/console/sign-in")
    .set("sec-fetch-site", "same-origin")
    .type("form")
    .send({ key });
  expect(signIn.status).toBe(303);
  const page = await agent.get(`/console/executions/${id}`);
  expect(page.status).toBe(200);
  return page.text;
}

describe("a parent whose write waits for gas funding", () => {
  it("shows the child's funding request (wallet, amount, deadline) in its own wait", async () => {
    await world.anvil.test.setBalance({ address: payer, value: parseEther("1") });
    const deadline = new Date(Date.now() + 120_000).toISOString();
    drainBefore = "broadcast:0";
    const parent = await world.start(payout.name, {
      chainId: world.anvil.chainId,
      fundingDeadline: deadline,
    });

    let view: Json;
    await expect
      .poll(
        async () => {
          view = await runView(parent);
          return view.waitingFor?.[0]?.details?.funding !== undefined;
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBe(true);
    const wait = view.waitingFor[0];
    const funding = wait.details.funding;
    const child = wait.details.childId;
    expect(wait).toMatchObject({ kind: "child", name: "chain.transaction" });
    expect(funding).toMatchObject({
      executionId: child,
      workflow: "chain.transaction",
      chainId: world.anvil.chainId,
      address: payer,
      destination: { kind: "balance", address: payer },
      availableWei: "0",
      deadline,
    });
    const required = BigInt(funding.requiredWei);
    expect(required).toBeGreaterThan(9n);
    expect(funding.shortfallWei).toBe(required.toString());
    expect(wait.summary).toBe(
      `gas funding: ${payer} needs ${required} wei more (holds 0 of ${required}) on chain ` +
        `${world.anvil.chainId} before ${deadline}, for chain.transaction ${child}`,
    );
    // The child's own view is the funding wait the parent repeats.
    expect((await runView(child)).waitingFor[0]).toMatchObject({
      kind: "funding",
      until: deadline,
      details: { requiredWei: funding.requiredWei, refusedStep: "broadcast:0" },
    });

    const cli = await runTenor(["runs", "get", parent], {
      ...process.env,
      TENOR_API_URL: base,
      TENOR_API_KEY: key,
    } as Record<string, string>);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`  - child chain.transaction waiting for ${wait.summary}\n`);

    const page = await consolePage(parent);
    expect(page).toContain('aria-label="Funding requests"');
    expect(page).toContain(`href="/console/executions/${child}"`);
    expect(page).toContain(`needs ${required} wei more`);
    expect(page).toContain(payer);

    await world.anvil.test.setBalance({ address: payer, value: parseEther("1") });
    const done = await world.settled(parent);
    expect(done.status, JSON.stringify(done.failure)).toBe("completed");
    expect((await runView(parent)).waitingFor).toEqual([]);
  });
});

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { formatGwei, type Hex, keccak256, parseTransaction } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeeBumpRecord } from "../../src/chain/lifecycle/fee-bump-record.js";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import type { createPlatformApi } from "../../src/roles/platform-api.js";
import { launchConsoleBrowser } from "../api/support/console-browser.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { issueTestKeys } from "../support/api-client.js";
import { type ChainWorld, chainWorldApi, startChainWorld } from "./support/chain-world.js";

/**
 * Stuck transactions (docs/chains.md, "The lifecycle"), on an anvil that mines only when told to,
 * with a 400 ms stuck rule and one replacement allowed: both fees bumped, every hash watched (the
 * older attempt may be the one mined), and why each bump happened — the rule that fired, the old
 * and new fees and the rule behind each — journaled with the bump step and shown on the
 * execution's console page.
 */

let world: ChainWorld;
let api: ReturnType<typeof createPlatformApi>;
let server: Server;
let base: string;
let keys: { operator: string; integrator: string };
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    anvil: { automine: false },
    chain: { finality: { depth: 2 }, fees: { stuckAfterMs: 400, maxBumps: 1, bumpPercent: 12.5 } },
    signers: { bumper: 5, older: 6 },
  });
  api = chainWorldApi(world);
  ({ keys } = await issueTestKeys(api.keys, {
    operator: { org: "acme", role: "operator" },
    integrator: { org: "acme", role: "integrator" },
  }));
  server = api.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await api?.close();
  await world?.stop();
});

const waitingOn = (stage: string) => (v: ExecutionView) =>
  v.status === "waiting" && v.waitingFor?.[0]?.kind === "confirmation" && v.waitingFor[0].name === stage;

describe("stuck transactions and their replacements", () => {
  it("is in the run's steps and on its console page: what fired, old and new fees, the rule", async () => {
    const id = await world.send({ to: recipient, valueWei: "14" });
    await world.engine.waitForView(
      id,
      (v) => v.waitingFor?.[0]?.details?.operatorAttention !== undefined,
      "the replacement broadcast and no bump left",
    );
    await world.anvil.mine(2);
    expect((await world.settled(id)).output).toMatchObject({ verdict: "confirmed", attempts: 2 });

    const steps = await request(api.app)
      .get(`/v1/executions/${id}/steps`)
      .set("authorization", `Bearer ${keys.operator}`);
    expect(steps.status).toBe(200);
    const byName = (name: string) => steps.body.steps.find((s: { name: string }) => s.name === name);
    const [old, replacement] = ["sign:0", "sign:1"].map((n) => parseTransaction(byName(n).result.raw as Hex));
    const bump = byName("bump:0").result;
    expect(bump).toMatchObject({
      replace: true,
      why: {
        trigger: "fees.stuckAfterMs",
        stuckAfterMs: 400,
        attempt: 0,
        hash: byName("sign:0").result.hash,
      },
    });
    expect(bump.why.summary).toContain("had no receipt 400 ms after its broadcast (fees.stuckAfterMs)");

    const chromium = await launchConsoleBrowser(base, "fee-bump");
    try {
      const page = await chromium.signIn(keys.operator, "/console");
      await chromium.visit(page, `${base}/console/executions/${id}`);
      const row = page.locator("section[aria-label='Fee bumps'] tbody tr[data-bump='bump:0']");
      const cells = await row.locator("td").allInnerTexts();
      expect(cells[0]).toBe("bump:0");
      expect(cells[1]).toContain("attempt 0");
      expect(cells[1]).toContain("had no receipt 400 ms after its broadcast (fees.stuckAfterMs)");
      const gwei = (wei: bigint | undefined) => `${formatGwei(wei ?? 0n)} gwei`;
      expect(cells[2]).toContain(`${gwei(old?.maxFeePerGas)} → ${gwei(replacement?.maxFeePerGas)}`);
      expect(cells[3]).toContain(
        `${gwei(old?.maxPriorityFeePerGas)} → ${gwei(replacement?.maxPriorityFeePerGas)}`,
      );
      expect(`${cells[2]} ${cells[3]}`).toMatch(
        /\((fees\.bumpPercent 12\.5 %|node's suggestion|new priority fee)\)/,
      );
      expect(cells[4]).toBe("Replaced by attempt 1");
      await chromium.screenshot(page, "fee-bump-reason");

      // The reasons are read from step results: a role that may not read payloads does not see them.
      const integrator = await chromium.signIn(keys.integrator, "/console");
      await chromium.visit(integrator, `${base}/console/executions/${id}`);
      expect(await integrator.locator("section[aria-label='Journal']").count()).toBe(1);
      expect(await integrator.locator("section[aria-label='Fee bumps']").count()).toBe(0);
    } finally {
      await chromium.close();
    }
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
    // Why it was bumped is journaled with the bump: the rule that fired, old and new fees, and the
    // rule behind each new fee.
    const bump = FeeBumpRecord.parse(journal.find((e) => e.name === "bump:0")!.result);
    expect(bump).toMatchObject({
      replace: true,
      maxFeePerGas: String(b.maxFeePerGas),
      maxPriorityFeePerGas: String(b.maxPriorityFeePerGas),
      why: {
        trigger: "fees.stuckAfterMs",
        stuckAfterMs: 400,
        attempt: 0,
        hash: first,
        previous: {
          maxFeePerGas: String(a.maxFeePerGas),
          maxPriorityFeePerGas: String(a.maxPriorityFeePerGas),
        },
        bumpPercent: 12.5,
        raisedBy: { maxPriorityFeePerGas: expect.stringMatching(/^(bumpPercent|nodeSuggestion)$/) },
      },
    });
    expect(bump.why.summary).toContain("no receipt 400 ms after its broadcast (fees.stuckAfterMs)");
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

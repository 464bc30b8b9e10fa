import type { Pool } from "pg";
import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAsset } from "../../../flows/assets/create-asset.js";
import { mintAsset } from "../../../flows/assets/mint-asset.js";
import { AssetToken } from "../../../src/chain/contracts/artifacts.js";
import { chainTransactionVersions } from "../../../src/chain/lifecycle/transaction-workflow.js";
import type { ExecutionClient } from "../../../src/engine/execution-client.js";
import { type CrashWorld, startCrashWorld } from "../../chain/support/crash-world.js";
import { ANVIL_KEYS, type Anvil } from "../../support/anvil.js";
import { waitUntil } from "../../support/processes.js";
import { bondTemplate, HOT, resolverForHot } from "./support/asset-world.js";

/**
 * kill -9 of a real runner process right after the mint's mintBatch broadcast, before it is
 * journaled: the next runner resumes the same execution and the holders are credited exactly once.
 */

let world: CrashWorld;
let anvil: Anvil;
let pool: Pool;
let client: ExecutionClient;
let dir: string;

beforeAll(async () => {
  world = await startCrashWorld({
    file: import.meta.url,
    workflows: [...chainTransactionVersions, createAsset, mintAsset],
    config: async (node) => ({ assetTemplates: [bondTemplate(node, await resolverForHot(node))] }),
  });
  ({ anvil, pool, client, dir } = world);
}, 60_000);

afterAll(async () => {
  await world?.stop();
});

const startRunner = (crash: boolean) =>
  world.startRunner("asset-runner", "test/fixtures/asset-runner-process.ts", {
    ...(crash ? { CRASH_PHASES: "token.mint", CRASH_DIR: dir } : {}),
  });

const settled = (id: string) =>
  waitUntil(
    `execution ${id} to settle`,
    async () => {
      const v = await client.view(id);
      return v.status === "completed" || v.status === "failed" ? v : undefined;
    },
    { timeoutMs: 90_000 },
  );

describe("a mint with its runner killed right after the mintBatch broadcast", () => {
  it("resumes the same execution: one mintBatch, each holder credited exactly once", async () => {
    const creator = await startRunner(false);
    const { executionId: created } = await client.start({
      workflow: createAsset.name,
      input: { templateId: "acme-bond", name: "Crash Mint", symbol: "CMNT", initialPrice: "1" },
      orgId: "acme",
    });
    const asset = await settled(created);
    await creator.kill();
    expect(asset.status, JSON.stringify(asset.failure)).toBe("completed");
    const { assetId, token } = asset.output as { assetId: string; token: Address };
    const sentBefore = await anvil.public.getTransactionCount({ address: HOT });

    const holders = [5, 6].map((i) => privateKeyToAccount(ANVIL_KEYS[i] as `0x${string}`).address);
    const { executionId: id } = await client.start({
      workflow: mintAsset.name,
      input: {
        assetId,
        holders: [
          { address: holders[0], amount: "10" },
          { address: holders[1], amount: "0.5" },
        ],
      },
      orgId: "acme",
      idempotencyKey: "crash-mint",
    });
    const killed = await startRunner(true);
    const exit = await killed.exit;
    expect(exit.signal).toBe("SIGKILL");
    const survivor = await startRunner(true);
    const view = await settled(id);
    await survivor.kill();
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    const balance = (holder: Address) =>
      anvil.public.readContract({
        address: token,
        abi: AssetToken.abi,
        functionName: "balanceOf",
        args: [holder],
      });
    expect(await balance(holders[0] as Address)).toBe(10n * 10n ** 18n);
    expect(await balance(holders[1] as Address)).toBe(5n * 10n ** 17n);
    expect(
      await anvil.public.readContract({ address: token, abi: AssetToken.abi, functionName: "totalSupply" }),
    ).toBe(105n * 10n ** 17n);
    // One transaction for the mint: the broadcast the killed runner made, reconciled, not a second one.
    expect(await anvil.public.getTransactionCount({ address: HOT })).toBe(sentBefore + 1);
    const { rows } = await pool.query(
      "SELECT count(*)::int AS n FROM executions WHERE workflow = 'asset.mint'",
    );
    expect(rows[0].n).toBe(1);
  }, 240_000);
});

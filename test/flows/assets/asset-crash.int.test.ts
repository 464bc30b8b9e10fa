import type { Pool } from "pg";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAsset } from "../../../flows/assets/create-asset.js";
import { AssetToken } from "../../../src/chain/contracts/artifacts.js";
import { chainTransactionVersions } from "../../../src/chain/lifecycle/transaction-workflow.js";
import type { ExecutionClient, ExecutionView } from "../../../src/engine/execution-client.js";
import { type CrashWorld, startCrashWorld } from "../../chain/support/crash-world.js";
import type { Anvil } from "../../support/anvil.js";
import { waitUntil } from "../../support/processes.js";
import { assetsOf, bondTemplate, eventCounts, HOT, resolverForHot } from "./support/asset-world.js";

/**
 * kill -9 of a real runner process right after each of the feed phase's three broadcasts, before
 * the broadcast is journaled: each next runner resumes the same execution, and the asset ends with
 * one token, one feed, one observation and one staleness bound, unpaused exactly once.
 */

let world: CrashWorld;
let anvil: Anvil;
let pool: Pool;
let client: ExecutionClient;
let dir: string;

beforeAll(async () => {
  world = await startCrashWorld({
    file: import.meta.url,
    workflows: [...chainTransactionVersions, createAsset],
    config: async (node) => ({ assetTemplates: [bondTemplate(node, await resolverForHot(node))] }),
  });
  ({ anvil, pool, client, dir } = world);
}, 60_000);

afterAll(async () => {
  await world?.stop();
});

const PHASES = ["feed.create", "feed.observe", "feed.bound"];

function startRunner() {
  return world.startRunner("asset-runner", "test/fixtures/asset-runner-process.ts", {
    CRASH_PHASES: PHASES.join(","),
    CRASH_DIR: dir,
  });
}

const settled = (id: string) =>
  waitUntil(
    `execution ${id} to settle`,
    async () => {
      const v = await client.view(id);
      return v.status === "completed" || v.status === "failed" ? v : undefined;
    },
    { timeoutMs: 60_000 },
  );

describe("asset creation with its runner killed between the feed broadcasts", () => {
  it("resumes the same execution each time: one token, one feed, one bound, unpaused once", async () => {
    const input = { templateId: "acme-bond", name: "Crash Bond", symbol: "CRSH", initialPrice: "42.5" };
    const { executionId: id } = await client.start({ workflow: createAsset.name, input, orgId: "acme" });
    const seen: string[] = [];
    let second: string | undefined;
    for (const phase of PHASES) {
      const runner = await startRunner();
      const exit = await runner.exit;
      expect(exit.signal, `runner for ${phase}`).toBe("SIGKILL");
      // Between two runners the asset is paused, with the hashes recorded so far.
      const view = await client.view(id);
      const assetId = (view.progress as { assetId?: string } | null)?.assetId;
      const row = assetId ? await assetsOf(pool).get("acme", assetId) : undefined;
      expect(row?.status, `after the ${phase} broadcast`).toBe("paused");
      seen.push(`${phase}:${row?.hashes.map((h) => h.step).join("+")}`);
      if (phase === "feed.create") {
        // Another start of the same asset while the first is stuck: it is refused, naming the first.
        second = (await client.start({ workflow: createAsset.name, input, orgId: "acme" })).executionId;
      }
    }
    // The kill came before each broadcast was journaled, so its hash is listed by the next runner.
    expect(seen).toEqual([
      "feed.create:token.deploy",
      "feed.observe:token.deploy+feed.create",
      "feed.bound:token.deploy+feed.create+feed.observe",
    ]);
    const survivor = await startRunner();
    const view: ExecutionView = await settled(id);
    const refused = await settled(second as string);
    await survivor.kill();
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    expect(refused.failure).toMatchObject({
      code: "ASSET_ALREADY_CREATING",
      details: { executionId: id },
    });
    const output = view.output as { assetId: string; token: Address; hashes: { step: string }[] };
    expect(output.hashes.map((h) => h.step)).toEqual([
      "token.deploy",
      "feed.create",
      "feed.observe",
      "feed.bound",
    ]);
    // Four transactions in all: one token, one feed, one observation, one bound.
    expect(await anvil.public.getTransactionCount({ address: HOT })).toBe(4);
    expect(await eventCounts(anvil)).toEqual({
      FeedCreated: 1,
      ObservationSubmitted: 1,
      StalenessBoundSet: 1,
    });
    expect(
      await anvil.public.readContract({ address: output.token, abi: AssetToken.abi, functionName: "paused" }),
    ).toBe(false);
    const { rows } = await pool.query("SELECT status, activated_at FROM assets WHERE org_id = 'acme'");
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe("active");
    expect(rows[0].activated_at).not.toBeNull();
  }, 240_000);
});

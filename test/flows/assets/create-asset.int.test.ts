import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAsset } from "../../../flows/assets/create-asset.js";
import type { AssetTemplate } from "../../../flows/assets/ports.js";
import type { TrackedContract } from "../../../flows/support/indexing-scope.js";
import { AssetToken, PriceFeed } from "../../../src/chain/contracts/artifacts.js";
import { type ChainWorld, startChainWorld } from "../../chain/support/chain-world.js";
import {
  assetServices,
  assetsOf,
  bondTemplate,
  eventCounts,
  HOT,
  resolverForHot,
} from "./support/asset-world.js";

/**
 * asset.create against anvil through the real lifecycle: the token, then the feed phase's three
 * broadcasts, paused until the last one; a second start of the same asset creates nothing; a
 * creation that failed half-way is finished by starting the same asset again, on the same token.
 */

let world: ChainWorld;
let resolver: Address;
const templates: AssetTemplate[] = [];
/** Runs before each contract the creation adds to the indexing scope (a test's own fault). */
let beforeTrack: ((contract: TrackedContract) => Promise<void>) | undefined;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    workflows: [createAsset],
    services: assetServices(templates, (table) => ({
      ...table,
      async add(contract, fromHeight) {
        await beforeTrack?.(contract);
        await table.add(contract, fromHeight);
      },
    })),
  });
  resolver = await resolverForHot(world.anvil);
  templates.push(
    bondTemplate(world.anvil, resolver),
    bondTemplate(world.anvil, resolver, { id: "globex-fund", kind: "fund", orgId: "globex" }),
  );
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const txCount = () => world.anvil.public.getTransactionCount({ address: HOT });

describe("asset.create", () => {
  it("deploys the token paused, runs the feed phase as three broadcasts, and ends active", async () => {
    const before = await eventCounts(world.anvil);
    const id = await world.start(createAsset.name, {
      templateId: "acme-bond",
      name: "Acme 2030",
      symbol: "ACM30",
      initialPrice: "100.25",
    });
    const view = await world.settled(id, 60_000);
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    const output = view.output as {
      assetId: string;
      token: Address;
      feed: Address;
      hashes: { step: string }[];
    };
    expect(output.hashes.map((h) => h.step)).toEqual([
      "token.deploy",
      "feed.create",
      "feed.observe",
      "feed.bound",
    ]);
    expect(view.progress).toMatchObject({ phase: "done", status: "active", assetId: output.assetId });
    const row = await assetsOf(world.engine.pool).get("acme", output.assetId);
    expect(row).toMatchObject({
      status: "active",
      token: output.token,
      feed: output.feed,
      resolver: resolver.toLowerCase(),
    });
    expect(row?.activatedAt).not.toBeNull();
    // On chain: the token is unpaused by the bound, and the feed holds the scaled first price.
    const read = world.anvil.public;
    expect(
      await read.readContract({ address: output.token, abi: AssetToken.abi, functionName: "paused" }),
    ).toBe(false);
    expect(
      await read.readContract({ address: output.token, abi: AssetToken.abi, functionName: "owner" }),
    ).toBe(HOT);
    const round = await read.readContract({
      address: output.feed,
      abi: PriceFeed.abi,
      functionName: "latestRoundData",
    });
    expect(round[1]).toBe(10_025_000_000n);
    const after = await eventCounts(world.anvil);
    expect(after.FeedCreated - before.FeedCreated).toBe(1);
    expect(after.ObservationSubmitted - before.ObservationSubmitted).toBe(1);
    expect(after.StalenessBoundSet - before.StalenessBoundSet).toBe(1);
    // The token, the feed and the resolver are in the organisation's indexing scope.
    const { rows } = await world.engine.pool.query(
      "SELECT address, kind FROM ledger_scope WHERE org_id = 'acme' AND removed_height IS NULL ORDER BY kind",
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { address: output.token, kind: "erc20" },
        { address: output.feed, kind: "price-feed" },
        { address: resolver.toLowerCase(), kind: "price-resolver" },
      ]),
    );

    // A second start of the same asset (org, template, symbol) is refused and sends nothing.
    const sent = await txCount();
    const again = await world.settled(
      await world.start(createAsset.name, {
        templateId: "acme-bond",
        name: "Another name",
        symbol: "ACM30",
        initialPrice: "1",
      }),
    );
    expect(again.failure).toMatchObject({
      code: "ASSET_ALREADY_CREATING",
      details: { assetId: output.assetId, executionId: id, ownerStatus: "completed" },
    });
    expect(await txCount()).toBe(sent);
  }, 90_000);

  it("refuses another organisation's template, and a price finer than the feed, before any write", async () => {
    const sent = await txCount();
    const foreign = await world.settled(
      await world.start(createAsset.name, {
        templateId: "globex-fund",
        name: "Not ours",
        symbol: "NOPE",
        initialPrice: "1",
      }),
    );
    expect(foreign.failure).toMatchObject({
      code: "ASSET_TEMPLATE_UNKNOWN",
      details: { field: "templateId", value: "globex-fund" },
    });
    const fine = await world.settled(
      await world.start(createAsset.name, {
        templateId: "acme-bond",
        name: "Too fine",
        symbol: "FINE",
        initialPrice: "1.123456789",
      }),
    );
    expect(fine.failure).toMatchObject({
      code: "ASSET_PRICE_INVALID",
      details: { field: "initialPrice", value: "1.123456789" },
    });
    expect(await txCount()).toBe(sent);
  }, 60_000);

  it("a creation that failed half-way stays a paused asset with its partial hashes; starting it again finishes the same token", async () => {
    const input = { templateId: "acme-bond", name: "Acme Fund", symbol: "ACMF", initialPrice: "7" };
    // The signer runs dry once the feed exists (the step tracking the resolver comes right before
    // the observation): the observation cannot be paid for.
    const balance = await world.anvil.public.getBalance({ address: HOT });
    let drained = false;
    beforeTrack = async (contract) => {
      if (contract.kind === "price-resolver" && !drained) {
        drained = true;
        await world.anvil.test.setBalance({ address: HOT, value: 0n });
      }
    };
    const id = await world.start(createAsset.name, input);
    const failed = await world.settled(id, 60_000);
    beforeTrack = undefined;
    expect(drained).toBe(true);
    expect(failed.status).toBe("failed");
    const assetId = (failed.progress as { assetId: string }).assetId;
    const stuck = await assetsOf(world.engine.pool).get("acme", assetId);
    expect(stuck?.status).toBe("paused");
    expect(stuck?.hashes.map((h) => h.step)).toEqual(["token.deploy", "feed.create"]);
    const token = stuck?.token as Address;
    expect(
      await world.anvil.public.readContract({ address: token, abi: AssetToken.abi, functionName: "paused" }),
    ).toBe(true);

    await world.anvil.test.setBalance({ address: HOT, value: balance });
    const sent = await txCount();
    const again = await world.settled(await world.start(createAsset.name, input), 60_000);
    expect(again.status, JSON.stringify(again.failure)).toBe("completed");
    expect(again.output).toMatchObject({ assetId, token, feed: stuck?.feed });
    // Only the two missing writes were sent: the token and the feed were found, not redeployed.
    expect(await txCount()).toBe(sent + 2);
    const row = await assetsOf(world.engine.pool).get("acme", assetId);
    expect(row?.status).toBe("active");
    expect(row?.hashes.map((h) => h.step)).toEqual([
      "token.deploy",
      "feed.create",
      "feed.observe",
      "feed.bound",
    ]);
  }, 120_000);
});

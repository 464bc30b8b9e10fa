import { encodeDeployData, encodeFunctionData } from "viem";
import { AssetToken, PriceFeed, PriceResolver } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { WorkflowContext } from "../../src/engine/context.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { addressText, type ChainAddress, chainAddress, sameAddress } from "../../src/values/index.js";
import { deployContract, hasCode, writeContract } from "../support/chain-writes.js";
import { indexingScopeService, type ScopeKind } from "../support/indexing-scope.js";
import type { AssetRecord } from "./asset-record.js";
import { latestRound, resolverEntry, resolverOwner } from "./chain-reads.js";
import { ASSET_ERRORS } from "./errors.js";
import { type AssetTemplate, assetPortsService } from "./ports.js";
import { scaledPrice } from "./scaled-price.js";
import { CreateAssetInput, CreateAssetOutput } from "./schemas.js";

/**
 * `asset.create` (docs/assets.md): deploys a bond or fund token from an asset template, then the
 * feed phase — create the price feed, submit its first observation, install the feed's staleness
 * bound on the template's resolver — each its own broadcast (a child lifecycle execution). The
 * token is paused until the bound lands, so a creation stopped anywhere is a paused asset with its
 * partial hash list, finished by resuming this execution (or, once it failed, by starting the same
 * asset again: the row, the CREATE2 salts and the read-before-write steps make that continue the
 * same token and feed rather than create new ones).
 */
export const createAsset = defineWorkflow({
  name: "asset.create",
  version: 1,
  input: CreateAssetInput,
  output: CreateAssetOutput,
  services: [chainAccessService, assetPortsService, indexingScopeService],
  async run(ctx, input) {
    ctx.progress({ phase: "template", hashes: [] });
    // The request boundary: the template is read from the platform's configuration by id, and an
    // organisation sees only its own templates.
    const template = await ctx.step("template.resolve", () => templateFor(ctx, input.templateId));
    if (!template) {
      throw new BusinessError(ASSET_ERRORS.TEMPLATE_UNKNOWN, `no asset template ${input.templateId}`, {
        field: "templateId",
        value: input.templateId,
        rule: "must name an asset template of the caller's organisation",
      });
    }
    const price = scaledPrice(input.initialPrice, template.priceDecimals);
    const signer = await ctx.step("signer.address", () =>
      addressText(ctx.service(chainAccessService).signers.forOrg(ctx.orgId, template.signerId).address),
    );
    await checkResolver(ctx, template, signer);
    const candidateId = await ctx.uuid();
    const claim = await ctx.step("asset.claim", () =>
      ctx.service(assetPortsService).registry.claim({
        id: candidateId,
        orgId: ctx.orgId,
        templateId: template.id,
        symbol: input.symbol,
        name: input.name,
        kind: template.kind,
        chainId: template.chainId,
        executionId: ctx.executionId,
        resolver: addressText(template.resolver),
      }),
    );
    if (claim.outcome === "held") {
      throw new BusinessError(
        ASSET_ERRORS.ALREADY_CREATING,
        `asset ${input.symbol} (${template.id}) belongs to execution ${claim.asset.executionId} (${claim.ownerStatus}); resume that execution instead of starting another`,
        { assetId: claim.asset.id, executionId: claim.asset.executionId, ownerStatus: claim.ownerStatus },
      );
    }
    return createOnChain(ctx, template, claim.asset, chainAddress(signer, "signer"), price);
  },
});

async function createOnChain(
  ctx: WorkflowContext,
  template: AssetTemplate,
  claimed: AssetRecord,
  owner: ChainAddress,
  price: bigint,
) {
  const asset = { ...claimed };
  const { chainId, signerId } = template;
  const resolver = chainAddress(asset.resolver, "asset.resolver");
  const key = `asset:${asset.orgId}:${asset.templateId}:${asset.symbol}`;
  const show = (phase: string, done: number) =>
    ctx.progress({ phase, done, total: 5, assetId: asset.id, status: "paused", hashes: asset.hashes });
  const record = async (step: string, patch: { token?: string; feed?: string }, hash?: string) => {
    const updated = await ctx.step(`${step}.record`, () =>
      ctx.service(assetPortsService).registry.record(asset.orgId, asset.id, ctx.executionId, {
        ...patch,
        ...(hash ? { hash: { step, hash } } : {}),
      }),
    );
    Object.assign(asset, updated);
  };
  const track = (step: string, address: string, kind: ScopeKind, from: string | undefined) =>
    ctx.step(`${step}.track`, () =>
      ctx
        .service(indexingScopeService)
        .add({ chainId, orgId: asset.orgId, address, kind }, BigInt(from ?? "0")),
    );

  show("token", 0);
  // The row's name (not this input's) fixes the token's init code, so a takeover finds the same token.
  const token = await deployContract(ctx, "token.deploy", {
    chainId,
    signerId,
    salt: `${key}:token`,
    initCode: encodeDeployData({
      abi: AssetToken.abi,
      bytecode: AssetToken.bytecode,
      args: [asset.name, asset.symbol, template.tokenDecimals, owner, resolver],
    }),
  });
  await record("token.deploy", { token: addressText(token.address) }, token.transaction?.hash);
  await track("token", token.address, "erc20", token.transaction?.blockNumber);

  show("feed.create", 1);
  const feed = await deployContract(ctx, "feed.create", {
    chainId,
    signerId,
    salt: `${key}:feed`,
    initCode: encodeDeployData({
      abi: PriceFeed.abi,
      bytecode: PriceFeed.bytecode,
      args: [token.address, owner, template.priceDecimals],
    }),
  });
  await record("feed.create", { feed: addressText(feed.address) }, feed.transaction?.hash);
  await track("feed", feed.address, "price-feed", feed.transaction?.blockNumber);
  await track("resolver", resolver, "price-resolver", undefined);

  show("feed.observe", 2);
  const round = await ctx.step("feed.observe.read", () => latestRound(ctx, chainId, feed.address));
  if (round === 0) {
    const sent = await writeContract(ctx, "feed.observe", {
      chainId,
      signerId,
      to: feed.address,
      data: encodeFunctionData({ abi: PriceFeed.abi, functionName: "submit", args: [price] }),
    });
    await record("feed.observe", {}, sent.hash);
  }

  show("feed.bound", 3);
  const entry = await ctx.step("feed.bound.read", () => resolverEntry(ctx, chainId, resolver, token.address));
  if (!sameAddress(entry.feed, feed.address) || entry.maxAgeSeconds === "0") {
    if (!sameAddress(entry.feed, ZERO) && !sameAddress(entry.feed, feed.address)) {
      throw new BusinessError(
        ASSET_ERRORS.FEED_CONFLICT,
        `resolver ${asset.resolver} already prices ${token.address} with feed ${entry.feed}`,
        { assetId: asset.id, resolver: asset.resolver, token: token.address, feed: entry.feed },
      );
    }
    // Only the feed this phase created: the resolver reads its asset from the feed itself.
    const sent = await writeContract(ctx, "feed.bound", {
      chainId,
      signerId,
      to: resolver,
      data: encodeFunctionData({
        abi: PriceResolver.abi,
        functionName: "setStalenessBound",
        args: [feed.address, BigInt(template.stalenessSeconds)],
      }),
    });
    await record("feed.bound", {}, sent.hash);
  }

  const activation = await ctx.step("asset.activate", () =>
    ctx.service(assetPortsService).registry.activate(asset.orgId, asset.id, ctx.executionId),
  );
  Object.assign(asset, activation.asset);
  ctx.progress({
    phase: "done",
    done: 5,
    total: 5,
    assetId: asset.id,
    status: "active",
    hashes: asset.hashes,
  });
  return {
    assetId: asset.id,
    status: "active" as const,
    token: addressText(token.address),
    feed: addressText(feed.address),
    resolver: asset.resolver,
    hashes: asset.hashes,
  };
}

const ZERO = "0x0000000000000000000000000000000000000000";

function templateFor(ctx: WorkflowContext, id: string): AssetTemplate | null {
  const template = ctx.service(assetPortsService).templates.get(id);
  return template && template.orgId === ctx.orgId ? template : null;
}

/**
 * Before anything is deployed: the template's resolver must exist and be owned by the template's
 * signer, or the last write could never land and the asset would stay paused.
 */
async function checkResolver(ctx: WorkflowContext, template: AssetTemplate, signer: string) {
  const seen = await ctx.step("resolver.check", async () => {
    const resolver = chainAddress(template.resolver, "template.resolver");
    const present = await hasCode(ctx, template.chainId, resolver);
    return {
      present,
      owner: present ? await resolverOwner(ctx, template.chainId, resolver) : null,
    };
  });
  if (!seen.present || seen.owner !== signer) {
    throw new BusinessError(
      ASSET_ERRORS.RESOLVER_UNUSABLE,
      `asset template ${template.id}: resolver ${template.resolver} ${seen.present ? `is owned by ${seen.owner}, not the template's signer ${signer}` : "has no code"}`,
      { templateId: template.id, resolver: template.resolver, owner: seen.owner, signer },
    );
  }
}

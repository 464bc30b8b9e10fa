import { encodeFunctionData } from "viem";
import { AssetToken } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { addressText, chainAddress } from "../../src/values/index.js";
import { writeContract } from "../support/chain-writes.js";
import { ASSET_ERRORS } from "./errors.js";
import { mintUnits } from "./mint-holders.js";
import { assetPortsService } from "./ports.js";
import { MINT_ASSET_WORKFLOW, MintAssetInput, MintAssetOutput } from "./schemas.js";

/**
 * `asset.mint` (docs/assets.md, "Minting"): credits holders with an active asset's token in one
 * `mintBatch` transaction, sent by the template's signer (the token's owner) as a child lifecycle
 * execution. The child journals its signed bytes before the broadcast, so a runner killed anywhere
 * mints exactly once: the next runner replays this execution and the child reconciles its one
 * transaction instead of signing another.
 */
export const mintAsset = defineWorkflow({
  name: MINT_ASSET_WORKFLOW,
  version: 1,
  input: MintAssetInput,
  output: MintAssetOutput,
  services: [chainAccessService, assetPortsService],
  // Minting is the issuer's: the generic start route (integrators) must not reach it.
  startedThrough: "/v1/assets/{id}/mints",
  async run(ctx, input) {
    ctx.progress({ phase: "resolve", assetId: input.assetId });
    // The asset and its template as they are now, journaled once: a replay mints with the same facts.
    const target = await ctx.step("asset.resolve", async () => {
      const ports = ctx.service(assetPortsService);
      const asset = await ports.registry.get(ctx.orgId, input.assetId);
      const template = asset ? ports.templates.get(asset.templateId) : undefined;
      return asset
        ? {
            status: asset.status,
            token: asset.token,
            chainId: asset.chainId,
            templateId: asset.templateId,
            signerId: template?.orgId === ctx.orgId ? template.signerId : null,
            decimals: template?.orgId === ctx.orgId ? template.tokenDecimals : null,
          }
        : null;
    });
    const refuse = (reason: string) => {
      throw new BusinessError(ASSET_ERRORS.NOT_MINTABLE, `asset ${input.assetId} cannot mint: ${reason}`, {
        assetId: input.assetId,
        reason,
      });
    };
    if (!target) return refuse("no asset of this organisation has this id");
    if (target.status !== "active" || !target.token)
      return refuse(`it is ${target.status}: its token mints once the creation's staleness bound lands`);
    if (target.signerId === null || target.decimals === null)
      return refuse(`its template ${target.templateId} is no longer configured for this organisation`);
    const { units, issues } = mintUnits(input.holders, target.decimals);
    const [issue] = issues;
    if (issue) {
      throw new BusinessError(ASSET_ERRORS.MINT_INVALID, `${issue.path}: ${issue.message}`, {
        field: issue.path,
        rule: issue.message,
      });
    }
    ctx.progress({ phase: "mint", assetId: input.assetId, holders: input.holders.length });
    const token = chainAddress(target.token, "asset.token");
    const sent = await writeContract(ctx, "token.mint", {
      chainId: target.chainId,
      signerId: target.signerId,
      to: token,
      data: encodeFunctionData({
        abi: AssetToken.abi,
        functionName: "mintBatch",
        args: [input.holders.map((h) => chainAddress(h.address, "holders.address")), units],
      }),
    });
    ctx.progress({ phase: "done", assetId: input.assetId, hash: sent.hash });
    return {
      assetId: input.assetId,
      token: addressText(token),
      hash: sent.hash,
      blockNumber: sent.blockNumber,
      holders: input.holders.length,
      totalUnits: units.reduce((sum, u) => sum + u, 0n).toString(),
    };
  },
});

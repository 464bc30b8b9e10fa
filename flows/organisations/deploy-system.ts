import { encodeDeployData } from "viem";
import { z } from "zod";
import { CHAIN_ERRORS } from "../../src/chain/chain-error-codes.js";
import { SystemSettings } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { WorkflowContext } from "../../src/engine/context.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { addressText, chainAddress } from "../../src/values/index.js";
import { deployContract, deploymentAddress } from "../support/chain-writes.js";
import { indexingScopeService } from "../support/indexing-scope.js";
import { chainHead } from "./chain-reads.js";
import { ORGANISATION_ERRORS } from "./errors.js";
import { organisationSystemsService } from "./ports.js";
import { saveSystemSettings } from "./save-system-settings.js";

/**
 * Organisation deployment (docs/organisations.md): deploys the organisation's SystemSettings on a
 * chain, owned by one of the organisation's signers, and makes it the organisation's system. The
 * organisation is the execution's (its API key), never the input's.
 */

export const DeploySystemInput = z
  .object({
    chainId: z.number().int("must be an integer").positive("must be ≥ 1"),
    /** The organisation's signer that sends the deployment and owns the settings. */
    signerId: z.string().min(1, "is required"),
  })
  .strict();

export const DeploySystemOutput = z.object({
  chainId: z.number(),
  /** The organisation's SystemSettings on the chain (lower-case). */
  address: z.string(),
  owner: z.string(),
  /** The system it replaced, or null for the organisation's first. */
  replaced: z.string().nullable(),
  /** False when the contract was already there (a re-run) and nothing was sent. */
  sent: z.boolean(),
});

export const deployOrganisationSystem = defineWorkflow({
  name: "organisation.deploy-system",
  version: 1,
  input: DeploySystemInput,
  output: DeploySystemOutput,
  // The deployment's own steps, and saveSystemSettings' (the indexing scope, the systems' record).
  services: [chainAccessService, organisationSystemsService, indexingScopeService],
  async run(ctx, input) {
    const owner = await ctx.step("system.owner", () => ownerOf(ctx, input.signerId));
    if (owner.address === null) {
      throw new BusinessError(
        CHAIN_ERRORS.SIGNER_UNKNOWN,
        `signerId = ${input.signerId}: no such signer for organisation ${ctx.orgId}`,
        { field: "signerId", value: input.signerId },
      );
    }
    const deployment = {
      chainId: input.chainId,
      signerId: input.signerId,
      initCode: encodeDeployData({
        abi: SystemSettings.abi,
        bytecode: SystemSettings.bytecode,
        args: [chainAddress(owner.address, "owner")],
      }),
      salt: systemSalt(ctx),
    };
    const address = addressText(deploymentAddress(deployment));
    const fromHeight = await register(ctx, input.chainId, address);
    const deployed = await deployContract(ctx, "system.deploy", deployment);
    const saved = await saveSystemSettings(ctx, {
      chainId: input.chainId,
      address,
      fromHeight,
      head: () => chainHead(ctx, input.chainId),
    });
    return {
      chainId: input.chainId,
      address,
      owner: owner.address,
      replaced: saved.replaced,
      sent: deployed.transaction !== null,
    };
  },
});

/** The CREATE2 salt: organisation, chain and deployment (this execution), so each is its own. */
function systemSalt(ctx: WorkflowContext): string {
  return `organisation-system:${ctx.orgId}:${ctx.executionId}`;
}

/** Step: the signer's address when the organisation may use it (a fact; the body refuses). */
async function ownerOf(ctx: WorkflowContext, signerId: string): Promise<{ address: string | null }> {
  try {
    return { address: ctx.service(chainAccessService).signers.forOrg(ctx.orgId, signerId).address };
  } catch (error) {
    if ((error as { code?: string }).code === CHAIN_ERRORS.SIGNER_UNKNOWN) return { address: null };
    throw error;
  }
}

/**
 * Registers the deployment before anything is sent, so the failed-deployment schedule can find it
 * if the execution dies; returns the height the system is tracked from. Refuses while another
 * deployment of the organisation on the chain is running.
 */
async function register(ctx: WorkflowContext, chainId: number, address: string): Promise<bigint> {
  const registration = await ctx.step("system.register", async () => {
    const result = await ctx.service(organisationSystemsService).register({
      orgId: ctx.orgId,
      chainId,
      address,
      executionId: ctx.executionId,
      fromHeight: await chainHead(ctx, chainId),
    });
    return result.registered
      ? { registered: true as const, fromHeight: result.system.fromHeight.toString() }
      : { registered: false as const, blockedBy: result.blockedBy.executionId };
  });
  if (!registration.registered) {
    throw new BusinessError(
      ORGANISATION_ERRORS.ORGANISATION_DEPLOYMENT_IN_PROGRESS,
      `organisation ${ctx.orgId} is already deploying its system on chain ${chainId} (execution ${registration.blockedBy})`,
      { chainId, blockedBy: registration.blockedBy },
    );
  }
  return BigInt(registration.fromHeight);
}

import { chainTransactionVersions } from "../src/chain/lifecycle/transaction-workflow.js";
import type { AnyActivity } from "../src/engine/activity.js";
import type { AnyWorkflow } from "../src/engine/workflow.js";
import { createAsset } from "./assets/create-asset.js";
import { mintAsset } from "./assets/mint-asset.js";
import { corporateActionDistribution } from "./corporate-actions/distribution.js";
import { demoAssetIssue, deployDemoToken, provisionDemoWallet } from "./demo-asset-issue.js";
import { demoSteps } from "./demo-steps.js";
import { claimBatch } from "./identity-claims/claim-batch.js";
import { deployOrganisationSystem } from "./organisations/deploy-system.js";

/** Every workflow of this release (the chain lifecycle included); the runner registers exactly these. */
export const ALL_WORKFLOWS: readonly AnyWorkflow[] = [
  demoAssetIssue,
  provisionDemoWallet,
  demoSteps,
  ...chainTransactionVersions,
  deployOrganisationSystem,
  createAsset,
  mintAsset,
  claimBatch,
  corporateActionDistribution,
];

/** Every activity of this release, each on its own queue; the runner works on exactly these. */
export const ALL_ACTIVITIES: readonly AnyActivity[] = [deployDemoToken];

import type { AnyActivity } from "../src/engine/activity.js";
import type { AnyWorkflow } from "../src/engine/workflow.js";
import { demoAssetIssue, deployDemoToken, provisionDemoWallet } from "./demo-asset-issue.js";

/** Every domain workflow of this release; the runner registers exactly these. */
export const ALL_WORKFLOWS: readonly AnyWorkflow[] = [demoAssetIssue, provisionDemoWallet];

/** Every activity of this release, each on its own queue; the runner works on exactly these. */
export const ALL_ACTIVITIES: readonly AnyActivity[] = [deployDemoToken];

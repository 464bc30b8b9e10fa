import type { AnyWorkflow } from "../src/engine/workflow.js";
import { demoAssetIssue, provisionDemoWallet } from "./demo-asset-issue.js";

/** Every domain workflow of this release; the runner registers exactly these. */
export const ALL_WORKFLOWS: readonly AnyWorkflow[] = [demoAssetIssue, provisionDemoWallet];

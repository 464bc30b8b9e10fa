import { createHash } from "node:crypto";
import { z } from "zod";
import { defineActivity } from "../src/engine/activity.js";
import { BusinessError } from "../src/engine/errors.js";
import { defineWorkflow } from "../src/engine/workflow.js";

/** The demo's business outcomes; never reworded once shipped. */
export const DEMO_ERRORS = {
  /** Nobody decided the issue approval in time. */
  APPROVAL_EXPIRED: "APPROVAL_EXPIRED",
  /** An approver rejected the issue. */
  APPROVAL_REJECTED: "APPROVAL_REJECTED",
} as const;

declare module "../src/errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    demo: (typeof DEMO_ERRORS)[keyof typeof DEMO_ERRORS];
  }
}

/**
 * The quick-start demo: issue a demo asset. Two steps, an identity-bound approval with a deadline, a
 * durable sleep and a child workflow — every kind of wait the engine offers, end to end.
 * It touches no chain: the "deployments" are deterministic stand-ins.
 */

/** The organisation is the execution's (from the caller's API key), never part of the input. */
export const ProvisionWalletInput = z.object({ purpose: z.string().min(1) });
export const ProvisionWalletOutput = z.object({ walletId: z.string() });

export const provisionDemoWallet = defineWorkflow({
  name: "demo.provision-wallet",
  version: 1,
  input: ProvisionWalletInput,
  output: ProvisionWalletOutput,
  async run(ctx, input) {
    const id = await ctx.uuid();
    return ctx.step("wallet.create", () => ({
      walletId: `wallet-${ctx.orgId}-${input.purpose}-${id.slice(0, 8)}`,
    }));
  },
});

/** No organisation: it is the execution's, from the caller's API key. */
export const DemoIssueInput = z.object({
  symbol: z.string().regex(/^[A-Z0-9]{2,11}$/, "must be 2–11 upper-case letters or digits"),
  /** How long the approval may take, e.g. "30s", "24h". */
  approvalTimeout: z
    .string()
    .regex(/^\d+(ms|s|m|h|d)$/)
    .default("1h"),
  /** The settlement pause after approval, e.g. "2s". */
  settle: z
    .string()
    .regex(/^\d+(ms|s|m|h|d)$/)
    .default("2s"),
});

export const DemoIssueOutput = z.object({
  symbol: z.string(),
  feedAddress: z.string(),
  tokenAddress: z.string(),
  treasuryWallet: z.string(),
  approvedBy: z.string(),
});

/** The token "deployment", run as an activity on the `deployments` queue (two at a time per runner). */
export const deployDemoToken = defineActivity({
  name: "demo.deploy-token",
  queue: { name: "deployments", concurrency: 2 },
  input: z.object({ symbol: z.string() }),
  output: z.object({ address: z.string() }),
  async run(input) {
    return { address: demoAddress("token", input.symbol) };
  },
});

export const demoAssetIssue = defineWorkflow({
  name: "demo.asset-issue",
  version: 2,
  input: DemoIssueInput,
  output: DemoIssueOutput,
  async run(ctx, input) {
    ctx.progress({ phase: "deploy", done: 0, total: 4 });
    const feed = await ctx.step("feed.deploy", () => ({ address: demoAddress("feed", input.symbol) }));
    // Deployments go through their own worker pool (an activity queue), as signing would.
    const token = await ctx.step("token.deploy", deployDemoToken, { input: { symbol: input.symbol } });
    ctx.progress({ phase: "approval", done: 2, total: 4 });
    // Identity-bound: approvers see exactly these parameters and approve their hash.
    const decision = await ctx.waitForApproval("issue", {
      params: { symbol: input.symbol, feedAddress: feed.address, tokenAddress: token.address },
      timeout: input.approvalTimeout as `${number}s`,
    });
    if (decision.timedOut) {
      throw new BusinessError(
        DEMO_ERRORS.APPROVAL_EXPIRED,
        `no approval for ${input.symbol} within ${input.approvalTimeout}`,
      );
    }
    if (!decision.approved) {
      throw new BusinessError(
        DEMO_ERRORS.APPROVAL_REJECTED,
        `${decision.rejectedBy.name} rejected ${input.symbol}`,
        {
          reason: decision.reason,
        },
      );
    }
    await ctx.sleep("settle", input.settle as `${number}s`);
    ctx.progress({ phase: "treasury", done: 3, total: 4 });
    const treasury = await ctx.child(provisionDemoWallet, { purpose: "treasury" });
    ctx.progress({ phase: "done", done: 4, total: 4 });
    return {
      symbol: input.symbol,
      feedAddress: feed.address,
      tokenAddress: token.address,
      treasuryWallet: treasury.walletId,
      approvedBy: decision.approvers.map((a) => a.name).join(", "),
    };
  },
});

function demoAddress(kind: string, symbol: string): string {
  return `0x${createHash("sha256").update(`${kind}:${symbol}`).digest("hex").slice(0, 40)}`;
}

import type { WorkflowContext } from "../../src/engine/context.js";
import { BusinessError } from "../../src/engine/errors.js";
import { indexingScopeService, type TrackedContract } from "../support/indexing-scope.js";
import { ORGANISATION_ERRORS } from "./errors.js";
import { organisationSystemsService } from "./ports.js";

/**
 * Saving a deployed SystemSettings as the organisation's system, in this order:
 *
 * 1. `settings.current` reads the system the organisation has and the chain head, and journals
 *    which case holds (none / same address / a different address): a fact, not a decision;
 * 2. the body branches: a different address is replaced in the indexing scope (the old one
 *    removed at that height and the new one added, in one transaction); otherwise the new one is
 *    added. A scope change is durable before anything relies on it;
 * 3. `settings.record` records the new address as the organisation's system (the old one becomes
 *    `replaced` at the same height).
 *
 * Each write is idempotent (adding a tracked contract returns its row, replacing an old contract
 * no longer tracked only adds, recording an active system returns it), so a crash anywhere and a
 * re-run from the first line converge: the replay takes the journaled case and repeats at most the
 * write that was interrupted.
 */
export type CurrentSystem =
  | { case: "none"; height: string }
  | { case: "same"; address: string; height: string }
  | { case: "different"; address: string; height: string }
  | { case: "abandoned"; height: string };

export interface SavedSystem {
  /** The address the new system replaced, or null. */
  replaced: string | null;
}

export async function saveSystemSettings(
  ctx: WorkflowContext,
  system: {
    chainId: number;
    address: string;
    fromHeight: bigint;
    /** Reads the chain's current height (the deployment passes its chain's head). */
    head: () => Promise<bigint>;
  },
): Promise<SavedSystem> {
  const { chainId, address } = system;
  const current = await ctx.step("settings.current", () => readCurrent(ctx, system));
  if (current.case === "abandoned") throw abandoned(ctx, chainId);
  const tracked = (contract: string): TrackedContract => ({
    chainId,
    orgId: ctx.orgId,
    address: contract,
    kind: "system-settings",
  });
  const height = BigInt(current.height);
  if (current.case === "different") {
    await ctx.step("settings.scope", async () => {
      await ctx
        .service(indexingScopeService)
        .replace(tracked(current.address), height, tracked(address), system.fromHeight);
      return { removed: current.address, added: address };
    });
  } else {
    await ctx.step("settings.scope", async () => {
      await ctx.service(indexingScopeService).add(tracked(address), system.fromHeight);
      return { removed: null, added: address };
    });
  }
  const recorded = await ctx.step("settings.record", async () => {
    const activation = await ctx.service(organisationSystemsService).activate(ctx.executionId, height);
    return { activated: activation.activated, status: activation.system.status };
  });
  if (!recorded.activated) throw abandoned(ctx, chainId);
  return { replaced: current.case === "different" ? current.address : null };
}

/** Step 1: which case holds now, and the chain head a replacement is removed at. */
async function readCurrent(
  ctx: WorkflowContext,
  { chainId, address, head: readHead }: { chainId: number; address: string; head: () => Promise<bigint> },
): Promise<CurrentSystem> {
  const systems = ctx.service(organisationSystemsService);
  const [own, active, head] = await Promise.all([
    systems.deployment(ctx.executionId),
    systems.active(ctx.orgId, chainId),
    readHead(),
  ]);
  const height = head.toString();
  if (active?.address === address) return { case: "same", address, height };
  // Declared failed by the schedule (this execution had failed and was resumed): change nothing.
  if (own?.status === "failed") return { case: "abandoned", height };
  if (!active) return { case: "none", height };
  return { case: "different", address: active.address, height };
}

function abandoned(ctx: WorkflowContext, chainId: number): BusinessError {
  return new BusinessError(
    ORGANISATION_ERRORS.ORGANISATION_DEPLOYMENT_ABANDONED,
    `the deployment of execution ${ctx.executionId} on chain ${chainId} was declared failed; start a new one`,
    { chainId, executionId: ctx.executionId },
  );
}

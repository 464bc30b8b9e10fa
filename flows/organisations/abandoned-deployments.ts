import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { ServiceLookup } from "../../src/engine/services.js";
import { sameAddress } from "../../src/values/index.js";
import { indexingScopeService, type TrackedContract } from "../support/indexing-scope.js";
import { chainHead } from "./chain-reads.js";
import { type AbandonedDeployment, organisationSystemsService } from "./ports.js";

/**
 * The failed-deployment pass (docs/organisations.md, "Abandoned deployments"). A deployment still
 * `deploying` whose execution failed (a cancel ends as failed) or is gone (deleted by retention)
 * will never record itself: it is declared `failed` at the chain's current height, then its
 * system is taken out of the indexing scope at that height. A pass stopped between the two finds
 * the failed row still in scope next time and finishes the removal.
 *
 * If the dead execution had already replaced the organisation's system in the scope (it died
 * between the scope change and the record), the organisation's recorded system is no longer
 * tracked: it is tracked again from the dead deployment's registration height, which is at or
 * below the height it was removed at, so no block is missed (ingest keeps a log once).
 */
export interface AbandonedDeploymentsReport {
  /** Deployments declared failed in this pass. */
  failed: number;
  /** Failed deployments whose system is now out of the indexing scope (if it was ever in it). */
  released: number;
  /** Recorded systems tracked again after a dead replacement had removed them. */
  restored: number;
  /** Deployments left for the next pass (their chain could not be read, ...). */
  errors: number;
}

export interface DeploymentLog {
  info(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
}

/** Most deployments one pass settles; the rest wait for the next. */
export const ABANDONED_BATCH = 100;

/** What a pass reaches: the deployments, the indexing scope and the chains' heads. */
export const ABANDONED_DEPLOYMENT_SERVICES = [
  organisationSystemsService,
  indexingScopeService,
  chainAccessService,
] as const;

export async function releaseAbandonedDeployments(
  services: ServiceLookup,
  log: DeploymentLog,
): Promise<AbandonedDeploymentsReport> {
  const report: AbandonedDeploymentsReport = { failed: 0, released: 0, restored: 0, errors: 0 };
  for (const deployment of await services.service(organisationSystemsService).abandoned(ABANDONED_BATCH)) {
    try {
      await settle(services, deployment, report, log);
    } catch (error) {
      report.errors++;
      log.warn("abandoned organisation deployment left for the next pass", {
        orgId: deployment.system.orgId,
        chainId: deployment.system.chainId,
        executionId: deployment.system.executionId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return report;
}

async function settle(
  services: ServiceLookup,
  deployment: AbandonedDeployment,
  report: AbandonedDeploymentsReport,
  log: DeploymentLog,
): Promise<void> {
  let { system } = deployment;
  if (deployment.reason !== "scope-not-released") {
    const height = await chainHead(services, system.chainId);
    const reason =
      deployment.reason === "execution-missing"
        ? "execution no longer exists"
        : `execution failed (${deployment.failureCode ?? "unknown code"})`;
    const failed = await services
      .service(organisationSystemsService)
      .markFailed(system.executionId, height, reason);
    // Recorded (or declared failed by another runner) since it was read: nothing to do.
    if (!failed) return;
    system = failed;
    report.failed++;
  }
  const tracked = (address: string): TrackedContract => ({
    chainId: system.chainId,
    orgId: system.orgId,
    address,
    kind: "system-settings",
  });
  const removedHeight = system.removedHeight ?? system.fromHeight;
  await services.service(indexingScopeService).remove(tracked(system.address), removedHeight);
  report.released++;
  const restored = await restoreRecorded(services, system.orgId, system.chainId, system.fromHeight);
  if (restored) report.restored++;
  log.info("organisation deployment declared failed and taken out of the indexing scope", {
    orgId: system.orgId,
    chainId: system.chainId,
    executionId: system.executionId,
    address: system.address,
    reason: deployment.reason,
    failureCode: deployment.failureCode,
    removedHeight: removedHeight.toString(),
    restored,
  });
}

/** Tracks the organisation's recorded system again when it is not tracked; its address when it did. */
async function restoreRecorded(
  services: ServiceLookup,
  orgId: string,
  chainId: number,
  fromHeight: bigint,
): Promise<string | null> {
  const active = await services.service(organisationSystemsService).active(orgId, chainId);
  if (!active) return null;
  const live = await services.service(indexingScopeService).live(chainId, orgId, "system-settings");
  if (live.some((c) => sameAddress(c.address, active.address))) return null;
  await services
    .service(indexingScopeService)
    .add({ chainId, orgId, address: active.address, kind: "system-settings" }, fromHeight);
  return active.address;
}

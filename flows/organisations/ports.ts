import { defineService } from "../../src/engine/services.js";

/**
 * What the organisation flows read and write of the organisations' system deployments
 * (docs/organisations.md). A service (src/engine/services.ts) the runner provides over PostgreSQL
 * (workers/application.ts). Every call is durable when it resolves and safe to repeat, so a step re-run after
 * a crash changes nothing twice.
 */
export type SystemStatus = "deploying" | "active" | "replaced" | "failed";

export interface OrganisationSystem {
  orgId: string;
  chainId: number;
  /** Lower-case SystemSettings address. */
  address: string;
  executionId: string;
  status: SystemStatus;
  /** Chain head when the deployment was registered: the contract is no older. */
  fromHeight: bigint;
  removedHeight: bigint | null;
}

export type Registration =
  | { registered: true; system: OrganisationSystem }
  | { registered: false; blockedBy: OrganisationSystem };

export type Activation =
  | { activated: true; system: OrganisationSystem; replaced: OrganisationSystem | null }
  | { activated: false; system: OrganisationSystem };

export interface AbandonedDeployment {
  system: OrganisationSystem;
  reason: "execution-failed" | "execution-missing" | "scope-not-released";
  failureCode: string | null;
}

export interface OrganisationSystems {
  /** Registers the execution's deployment (`deploying`), or names the one still running. */
  register(entry: {
    orgId: string;
    chainId: number;
    address: string;
    executionId: string;
    fromHeight: bigint;
  }): Promise<Registration>;
  /** The deployment registered by the execution, or null. */
  deployment(executionId: string): Promise<OrganisationSystem | null>;
  /** The organisation's active system on the chain, or null. */
  active(orgId: string, chainId: number): Promise<OrganisationSystem | null>;
  /** Makes the execution's deployment the active one; the previous becomes replaced at the height. */
  activate(executionId: string, replacedAtHeight: bigint): Promise<Activation>;
  /** Deployments whose execution failed or is gone, and failed ones still in scope; oldest first. */
  abandoned(limit: number): Promise<AbandonedDeployment[]>;
  /** Declares a deploying deployment failed; null when it is no longer deploying. */
  markFailed(executionId: string, removedHeight: bigint, reason: string): Promise<OrganisationSystem | null>;
}

/** Provided by the runner's composition root (workers/application.ts); a test provides its own. */
export const organisationSystemsService = defineService<OrganisationSystems>("organisations.systems");

import type { ApiRole } from "../../auth/api-roles.js";

/**
 * What each role may do (README, "API keys and roles"). An organisation never sees another's
 * executions whatever its role; `admin` may do everything in its own. Platform keys may do nothing
 * in any organisation (separation of duties): they read the platform status and operate the queues.
 */
export const PERMISSIONS = {
  /** Start executions. */
  start: ["integrator", "admin"],
  /** Read status, lists, journals (without payloads) and approvals. */
  read: ["integrator", "approver", "operator", "admin", "issuer"],
  /** Read journal payloads (step results and errors). */
  readPayloads: ["operator", "admin"],
  signal: ["integrator", "operator", "admin"],
  cancel: ["integrator", "operator", "admin"],
  approve: ["approver", "admin"],
  /** Mint an organisation's asset to holders (POST /v1/assets/{id}/mints; docs/assets.md, "Minting"). */
  mint: ["issuer", "admin"],
  /** Retry a suspended or held execution now (POST /v1/executions/{id}/resume). */
  resume: ["operator", "admin"],
  /** Bulk operations by query: create with a dry run, read their progress and failures, abort. */
  operations: ["operator", "admin"],
  /** Pause and unpause a run (POST /v1/executions/{id}/pause, /unpause): the roles that may resume. */
  pause: ["operator", "admin"],
  /** Reset a run onto the newest version from a journal position (POST /v1/executions/{id}/reset). */
  reset: ["operator", "admin"],
  /** The signed evidence export of an execution (GET /v1/executions/{id}/evidence). */
  evidence: ["operator", "admin"],
  /** The org's webhook subscriptions (never their secrets), deliveries and dead letters. */
  webhooksRead: ["operator", "admin"],
  /** Create and delete webhook subscriptions, redeliver, send a test delivery. */
  webhooksManage: ["admin"],
  /** Add a contract already on chain to the organisation's Ledger Index scope (POST /v1/chains/{chainId}/tracked-contracts). */
  trackContracts: ["admin"],
  /** The org's audit trail (GET /v1/audit). */
  auditRead: ["operator", "admin"],
  /** The organisation's health; for platform keys, counts across organisations without execution ids. */
  platformStatus: ["operator", "admin", "platform-operator", "platform-admin"],
  /** Bull Board, read-only. */
  queuesRead: ["platform-operator", "platform-admin"],
  /** Bull Board actions (retry, remove, pause, clean). */
  queuesWrite: ["platform-admin"],
  /** The runners' schedules with their next run (GET /v1/platform/schedules; docs/schedules.md). */
  schedulesRead: ["platform-operator", "platform-admin"],
  /** Pause, resume and trigger a schedule now (POST /v1/platform/schedules/{name}/...). */
  schedulesManage: ["platform-admin"],
} as const satisfies Record<string, readonly ApiRole[]>;

export type Permission = keyof typeof PERMISSIONS;

export function roleMay(role: ApiRole, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly ApiRole[]).includes(role);
}

import type { ApiRole } from "../../store/pg-api-keys.js";

/**
 * What each role may do inside its organisation (DESIGN §6). An organisation never sees another's
 * executions whatever its role; `admin` may do everything in its own.
 */
export const PERMISSIONS = {
  /** Start executions. */
  start: ["integrator", "admin"],
  /** Read status, lists, journals (without payloads) and approvals. */
  read: ["integrator", "approver", "operator", "admin"],
  /** Read journal payloads (step results and errors). */
  readPayloads: ["operator", "admin"],
  signal: ["integrator", "operator", "admin"],
  cancel: ["integrator", "operator", "admin"],
  approve: ["approver", "admin"],
  platformStatus: ["operator", "admin"],
  /** Bull Board, read-only. */
  queuesRead: ["operator", "admin"],
  /** Bull Board actions (retry, remove, pause). */
  queuesWrite: ["admin"],
} as const satisfies Record<string, readonly ApiRole[]>;

export type Permission = keyof typeof PERMISSIONS;

export function roleMay(role: ApiRole, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly ApiRole[]).includes(role);
}

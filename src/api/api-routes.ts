import { APPROVAL_ROUTES } from "./approvals/routes.js";
import { AUDIT_ROUTES } from "./audit/routes.js";
import { CHAIN_ROUTES } from "./chains/routes.js";
import { EVIDENCE_ROUTES } from "./evidence/evidence-route.js";
import { EXECUTION_ROUTES } from "./executions/routes.js";
import { OPERATION_ROUTES } from "./operations/routes.js";
import { PLATFORM_ROUTES } from "./platform/platform-status.js";
import { SCHEDULE_ROUTES } from "./platform/schedule-routes.js";
import type { RouteDeclaration } from "./route.js";
import { WEBHOOK_ROUTES } from "./webhooks/routes.js";

/**
 * The declared routes of the Platform API, module by module, in the order the app mounts them and
 * the document lists them. The application's own routes (`Application.routes`) are mounted and
 * documented between the two groups.
 */
export const ROUTES_BEFORE_APPLICATION: readonly RouteDeclaration[] = [
  ...EXECUTION_ROUTES,
  ...EVIDENCE_ROUTES,
  ...OPERATION_ROUTES,
  ...APPROVAL_ROUTES,
  ...PLATFORM_ROUTES,
  ...SCHEDULE_ROUTES,
  ...AUDIT_ROUTES,
  ...CHAIN_ROUTES,
];
export const ROUTES_AFTER_APPLICATION: readonly RouteDeclaration[] = [...WEBHOOK_ROUTES];

/**
 * Every declared route of the platform: what the tests iterate, with the application's, instead of
 * restating paths.
 */
export const API_ROUTES: readonly RouteDeclaration[] = [
  ...ROUTES_BEFORE_APPLICATION,
  ...ROUTES_AFTER_APPLICATION,
];

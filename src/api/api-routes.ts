import { APPROVAL_ROUTES } from "./approvals/routes.js";
import { AUDIT_ROUTES } from "./audit/routes.js";
import { CHAIN_ROUTES } from "./chains/routes.js";
import { EVIDENCE_ROUTES } from "./evidence/evidence-route.js";
import { EXECUTION_ROUTES } from "./executions/routes.js";
import { PLATFORM_ROUTES } from "./platform/platform-status.js";
import type { RouteDeclaration } from "./route.js";
import { WEBHOOK_ROUTES } from "./webhooks/routes.js";

/**
 * The declared routes of the Platform API, module by module, in the order the app mounts them and
 * the document lists them. The organisations and assets routers are composed beside these until
 * they are declared too.
 */
export const ROUTES_BEFORE_ORGANISATIONS: readonly RouteDeclaration[] = [
  ...EXECUTION_ROUTES,
  ...EVIDENCE_ROUTES,
  ...APPROVAL_ROUTES,
  ...PLATFORM_ROUTES,
  ...AUDIT_ROUTES,
  ...CHAIN_ROUTES,
];
export const ROUTES_AFTER_ASSETS: readonly RouteDeclaration[] = [...WEBHOOK_ROUTES];

/** Every declared route: what the tests iterate instead of restating paths. */
export const API_ROUTES: readonly RouteDeclaration[] = [
  ...ROUTES_BEFORE_ORGANISATIONS,
  ...ROUTES_AFTER_ASSETS,
];

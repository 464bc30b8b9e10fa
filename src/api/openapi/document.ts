import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { AnyWorkflow } from "../../engine/workflow.js";
import { ROUTES_AFTER_APPLICATION, ROUTES_BEFORE_APPLICATION } from "../api-routes.js";
import type { TaggedRoutes } from "../application-routes.js";
import { registerRoutes } from "../route.js";
import { problem } from "./common.js";

/** The API's version in the document; bumped with a breaking change of any route. */
export const API_VERSION = "1.0.0";

const DESCRIPTION = `Tenor's Platform API.

**Authentication.** Every request except \`/livez\`, \`/readyz\` and \`/openapi.json\` sends
\`Authorization: Bearer <key>\`. Keys are issued with
\`npm run tenor -- keys create --org <org> --role <role> --subject <person>\` (printed once; only a SHA-256 is
stored) and act for one organisation in one role: \`integrator\`, \`approver\`, \`operator\` or \`admin\`. The
subject is the person or system the key was issued to: approvals count distinct subjects, and a subject may not
approve what it started (or anything under it). An organisation never sees, lists, signals or approves another's
executions; another organisation's execution answers 404 exactly like a missing one. Platform keys
(\`keys create --platform --role platform-operator|platform-admin\`) belong to no organisation: they operate Bull
Board and read \`/v1/platform/status\` (counts only); every other \`/v1\` route answers them 403.

**Rate limits.** Each key has \`api.rateLimit.max\` requests per \`api.rateLimit.windowSeconds\` (default 2000 per
10 s), shared by every api replica, announced in \`RateLimit-Policy\` and \`RateLimit\`. Over it: 429 RATE_LIMITED
with \`Retry-After\` (seconds). A start with \`Prefer: wait\` spends one request for its whole wait.

**Audit.** Votes, signals, cancels, key issues and revocations are recorded, refused ones included
(\`GET /v1/audit\`). Send \`X-Request-Id\` to find a request there; every response carries one.

**Errors.** Every error is \`application/problem+json\` (RFC 9457) with \`type\` derived from the stable \`code\`
(\`https://tenor.dev/problems/<code in kebab case>\`), \`title\`, \`status\`, \`detail\`, \`instance\`, \`code\`,
\`retryable\`, and field-level \`errors\` for validation problems.

**Unavailable.** Any route may answer 503 with \`Retry-After\` (seconds): \`OVERLOADED\` when the api process
refuses work at once (\`reason\`: \`pool_queue\`, \`event_loop_lag\`, \`in_flight\`, \`event_loop_busy\`), or
\`DATABASE_UNAVAILABLE\` when the request got no database connection (\`details.reason\`: \`pool_timeout\`,
\`too_many_connections\`, \`unreachable\`). In both cases nothing was done: send the same request again after
\`Retry-After\`.`;

function health(registry: OpenAPIRegistry): void {
  const Health = z.object({
    status: z
      .string()
      .meta({ description: "`ok`, `ready`, `starting`, `draining`, `overloaded` or `not ready`." }),
    reason: z
      .string()
      .optional()
      .meta({ description: "Why admission refuses every request now (`overloaded`)." }),
    checks: z.record(z.string(), z.string()).optional(),
  });
  for (const [path, summary] of [
    ["/livez", "Liveness: the process is up (touches no dependency)."],
    [
      "/readyz",
      "Readiness: PostgreSQL and Redis answer, the process is not starting or draining, and admission would " +
        "not refuse the next request (else 503; `overloaded` names the reason, as OVERLOADED refusals do).",
    ],
  ] as const) {
    registry.registerPath({
      method: "get",
      path,
      operationId: path.slice(1),
      tags: ["health"],
      summary,
      security: [],
      responses: {
        200: { description: "OK.", content: { "application/json": { schema: Health } } },
        503: { description: "Not ready.", content: { "application/json": { schema: Health } } },
      },
    });
  }
}

function adminAndDocument(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    tags: ["health"],
    summary: "This document (public).",
    security: [],
    responses: { 200: { description: "OpenAPI 3.1 document." } },
  });
  registry.registerPath({
    method: "get",
    path: "/admin/queues",
    operationId: "bullBoard",
    tags: ["admin"],
    summary: "Bull Board (HTML UI and its JSON API below this path)",
    description:
      "Platform keys only, as a Bearer header or through the sign-in session cookie. platform-admin: full board. " +
      "platform-operator: read-only; any mutating request below this path is 403 QUEUES_READ_ONLY before it " +
      "reaches Bull Board. Organisation keys of any role: 403. A session's mutating request must be same-origin " +
      "(403 CSRF_REJECTED). Every Tenor queue is shown (executions, schedules, each activity-* queue); job data " +
      "and return values are redacted for secret-looking fields.",
    responses: {
      200: { description: "The board.", content: { "text/html": { schema: z.string() } } },
      303: { description: "A browser without a session is sent to /admin/sign-in." },
      401: problem("UNAUTHENTICATED."),
      403: problem("FORBIDDEN (not a platform key), QUEUES_READ_ONLY or CSRF_REJECTED."),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/admin/sign-in",
    operationId: "boardSignIn",
    tags: ["admin"],
    summary: "Exchange a platform key for a board session cookie (HTML form; GET shows it)",
    description:
      "Form field `key`. Sets `tenor_board` (HttpOnly, SameSite=Strict, Path=/admin, Secure over TLS, 8 hours) and " +
      "redirects to /admin/queues. The session ends at sign-out (POST /admin/sign-out with the page's CSRF token), " +
      "after 8 hours, or at its next request once the key is revoked.",
    security: [],
    request: {
      body: {
        content: { "application/x-www-form-urlencoded": { schema: z.object({ key: z.string() }) } },
      },
    },
    responses: {
      303: { description: "Signed in; redirect to the board." },
      401: { description: "Not a live platform key (HTML page)." },
      403: { description: "Not sent from this site (HTML page)." },
    },
  });
}

/**
 * Builds the OpenAPI 3.1 document from the same schemas the handlers parse with. Deterministic for a
 * given set of workflows and application routes (no clock, no configuration), so the committed
 * openapi.json can be checked. The application's paths and tags follow the platform's reads and
 * precede webhooks.
 */
export function buildOpenApiDocument(
  workflows: readonly AnyWorkflow[],
  applicationRoutes: readonly TaggedRoutes[] = [],
): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "A Tenor API key (`tnr_...`).",
  });
  health(registry);
  adminAndDocument(registry);
  registerRoutes(registry, ROUTES_BEFORE_APPLICATION, { workflows });
  for (const { routes } of applicationRoutes) registerRoutes(registry, routes, { workflows });
  registerRoutes(registry, ROUTES_AFTER_APPLICATION, { workflows });
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: { title: "Tenor Platform API", version: API_VERSION, description: DESCRIPTION },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }],
    tags: [
      { name: "executions", description: "Start, read, list, signal and cancel executions." },
      { name: "approvals", description: "Identity-bound approvals." },
      { name: "platform", description: "Platform status." },
      { name: "health", description: "Liveness, readiness and this document." },
      { name: "admin", description: "Bull Board and its sign-in, for platform keys." },
      { name: "audit", description: "The organisation's audit trail." },
      ...applicationRoutes.map((routes) => routes.tag),
      {
        name: "webhooks",
        description: "Webhook subscriptions, deliveries, dead letters (docs/webhooks.md).",
      },
    ],
  });
  return document as unknown as Record<string, unknown>;
}

/** The document as committed: two-space JSON and a final newline. */
export function renderOpenApiDocument(
  workflows: readonly AnyWorkflow[],
  applicationRoutes: readonly TaggedRoutes[] = [],
): string {
  return `${JSON.stringify(buildOpenApiDocument(workflows, applicationRoutes), null, 2)}\n`;
}

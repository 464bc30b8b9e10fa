import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { AnyWorkflow } from "../../engine/workflow.js";
import { registerApprovalsOpenApi } from "../approvals/openapi.js";
import { registerChainsOpenApi } from "../chains/openapi.js";
import { registerExecutionsOpenApi } from "../executions/openapi.js";
import { registerPlatformOpenApi } from "../platform/platform-status.js";
import { problem } from "./common.js";

/** The API's version in the document; bumped with a breaking change of any route. */
export const API_VERSION = "1.0.0";

const DESCRIPTION = `Tenor's Platform API (DESIGN §6).

**Authentication.** Every request except \`/livez\`, \`/readyz\` and \`/openapi.json\` sends
\`Authorization: Bearer <key>\`. Keys are issued with \`npm run tenor -- keys create --org <org> --role <role>\`
(printed once; only a SHA-256 is stored) and act for one organisation in one role: \`integrator\`, \`approver\`,
\`operator\` or \`admin\`. An organisation never sees, lists, signals or approves another's executions; another
organisation's execution answers 404 exactly like a missing one.

**Errors.** Every error is \`application/problem+json\` (RFC 9457) with \`type\` derived from the stable \`code\`
(\`https://tenor.dev/problems/<code in kebab case>\`), \`title\`, \`status\`, \`detail\`, \`instance\`, \`code\`,
\`retryable\`, and field-level \`errors\` for validation problems.`;

function health(registry: OpenAPIRegistry): void {
  const Health = z.object({ status: z.string(), checks: z.record(z.string(), z.string()).optional() });
  for (const [path, summary] of [
    ["/livez", "Liveness: the process is up (touches no dependency)."],
    ["/readyz", "Readiness: PostgreSQL and Redis answer and the process is not draining (else 503)."],
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
      "Admin: full board. Operator: read-only (no retries, removals or pauses). Other roles: 403. Job data and " +
      "return values are redacted for secret-looking fields.",
    responses: {
      200: { description: "The board.", content: { "text/html": { schema: z.string() } } },
      401: problem("UNAUTHENTICATED."),
      403: problem("FORBIDDEN: only admin and operator."),
    },
  });
}

/**
 * Builds the OpenAPI 3.1 document from the same schemas the handlers parse with. Deterministic for a
 * given set of workflows (no clock, no configuration), so the committed openapi.json can be checked.
 */
export function buildOpenApiDocument(workflows: readonly AnyWorkflow[]): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "A Tenor API key (`tnr_...`).",
  });
  health(registry);
  adminAndDocument(registry);
  registerExecutionsOpenApi(registry, workflows);
  registerApprovalsOpenApi(registry);
  registerPlatformOpenApi(registry);
  registerChainsOpenApi(registry);
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
      { name: "admin", description: "Bull Board." },
    ],
  });
  return document as unknown as Record<string, unknown>;
}

/** The document as committed: two-space JSON and a final newline. */
export function renderOpenApiDocument(workflows: readonly AnyWorkflow[]): string {
  return `${JSON.stringify(buildOpenApiDocument(workflows), null, 2)}\n`;
}

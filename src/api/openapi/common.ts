import type { OpenAPIRegistry, ResponseConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { Permission } from "../auth/permissions.js";
import { PERMISSIONS } from "../auth/permissions.js";

/** The problem+json document (RFC 9457) every error answers with. */
export const ProblemSchema = z
  .object({
    type: z.string().meta({ description: "`https://tenor.dev/problems/<code in kebab case>`." }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
    code: z.string().meta({ description: "Stable error code." }),
    retryable: z.boolean(),
    errors: z
      .array(z.object({ pointer: z.string(), message: z.string() }))
      .optional()
      .meta({
        description: "Field-level errors of a validation problem (`body.symbol`, `query.limit`, ...).",
      }),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: "Problem" });

/** A problem response with its status and what it means on this route. */
export function problem(description: string): ResponseConfig {
  return { description, content: { "application/problem+json": { schema: ProblemSchema } } };
}

/** Responses every authenticated route can give. */
export function authProblems(permission: Permission): Record<number, ResponseConfig> {
  return {
    401: problem("UNAUTHENTICATED: no bearer API key, or an unknown or revoked one."),
    403: problem(
      `FORBIDDEN: the key's role may not do this (allowed: ${PERMISSIONS[permission].join(", ")}).`,
    ),
  };
}

/** Describes which roles a route admits, for its description. */
export function rolesNote(permission: Permission): string {
  return `Roles: ${PERMISSIONS[permission].join(", ")}.`;
}

export type RegisterOpenApi = (registry: OpenAPIRegistry) => void;

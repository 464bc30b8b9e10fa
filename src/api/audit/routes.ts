import type { Request, Response } from "express";
import { z } from "zod";
import { AUDIT_ACTIONS } from "../../store/pg-audit.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { problem, rolesNote } from "../openapi/common.js";
import { apiError } from "../problem.js";
import { pageLimit, pgText, UUID_PATTERN } from "../query-params.js";
import { defineRoute, type RouteDeclaration } from "../route.js";

export const AuditEventSchema = z
  .object({
    id: z.string().meta({ description: "Increasing sequence number." }),
    at: z.string(),
    actorKeyId: z.string().nullable().meta({ description: "The acting key; null for the operator CLI." }),
    subject: z
      .string()
      .meta({ description: "The person or system the acting key was issued to (`cli` for the CLI)." }),
    orgId: z.string().nullable(),
    role: z.string(),
    action: z.enum(AUDIT_ACTIONS),
    target: z.string().meta({
      description:
        "Execution id (with `/approvals/<name>` or `/signals/<name>`), key id, or webhook subscription or " +
        "delivery id (`new` for a subscription create that was refused).",
    }),
    requestId: z.string().nullable().meta({ description: "The `X-Request-Id` of the request." }),
    outcome: z.string().meta({ description: "`accepted`, or the stable error code of the refusal." }),
  })
  .meta({ id: "AuditEvent" });

export const AuditListSchema = z
  .object({ items: z.array(AuditEventSchema), nextCursor: z.string().nullable() })
  .meta({ id: "AuditList" });

export const AuditQuerySchema = z
  .object({
    action: z.enum(AUDIT_ACTIONS).optional(),
    subject: pgText(200).optional(),
    actorKeyId: z.string().regex(UUID_PATTERN, "must be a UUID").optional(),
    target: pgText(500).optional(),
    limit: pageLimit,
    cursor: z.string().optional().meta({ description: "`nextCursor` of the previous page." }),
  })
  .strict();

/** `GET /v1/audit`: the caller's organisation's audit trail, newest first, filtered, cursor-paged. */
function listAuditEvents(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const query = parseRequest(AuditQuerySchema, req.query, "query");
    const beforeId = query.cursor === undefined ? undefined : decodeAuditCursor(query.cursor);
    const rows = await deps.audit.list({
      orgId: principalOf(res).orgId,
      ...(query.action !== undefined ? { action: query.action } : {}),
      ...(query.subject !== undefined ? { subject: query.subject } : {}),
      ...(query.actorKeyId !== undefined ? { actorKeyId: query.actorKeyId } : {}),
      ...(query.target !== undefined ? { target: query.target } : {}),
      ...(beforeId !== undefined ? { beforeId } : {}),
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const body: z.infer<typeof AuditListSchema> = {
      items: page.map((r) => ({ ...r, action: r.action })),
      nextCursor: rows.length > query.limit && last ? Buffer.from(last.id).toString("base64url") : null,
    };
    res.json(body);
  };
}

/** A cursor is the base64url of the last id shown: a positive bigint, else 400 naming `query.cursor`. */
function decodeAuditCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^[1-9][0-9]{0,17}$/.test(id)) {
    throw apiError(API_ERRORS.REQUEST_INVALID, "the cursor is not one this API issued", {
      errors: [{ pointer: "query.cursor", message: "invalid cursor" }],
    });
  }
  return id;
}

/** The audit module's one route. */
export const AUDIT_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "get",
    path: "/v1/audit",
    permission: "auditRead",
    openapi: {
      operationId: "listAuditEvents",
      tags: ["audit"],
      summary: "Who did what under which role",
      description:
        "The organisation's append-only audit trail, newest first: every approval vote, signal and cancel " +
        "(accepted or refused, with the refusal's code), every webhook subscription created or deleted, test " +
        "delivery and redelivery (likewise), and every key issued or revoked for the organisation. " +
        rolesNote("auditRead"),
      request: { query: AuditQuerySchema },
      responses: {
        200: {
          description: "A page of events.",
          content: { "application/json": { schema: AuditListSchema } },
        },
        400: problem("REQUEST_INVALID (field `errors` names the parameter)."),
      },
    },
    handler: listAuditEvents,
  }),
];

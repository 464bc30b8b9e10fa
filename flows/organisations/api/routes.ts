import type { Request, Response } from "express";
import type { z } from "zod";
import { principalOf } from "../../../src/api/auth/authenticate.js";
import { parseRequest } from "../../../src/api/http.js";
import { problem, rolesNote } from "../../../src/api/openapi/common.js";
import { defineRoute, type RouteDeclaration } from "../../../src/api/route.js";
import type { PgOrganisationSystems } from "../store/pg-organisation-systems.js";
import { OrganisationSystemList, SystemsQuery } from "./schemas.js";

/** What the routes read of the deployments. */
type OrganisationSystemsReads = Pick<PgOrganisationSystems, "list">;

/** The stores the organisations routes read. */
export interface OrganisationRouteStores {
  systems: OrganisationSystemsReads;
}

/** Every system deployment of the key's organisation (never another's), newest first. */
function listSystems(systems: OrganisationSystemsReads) {
  return async (req: Request, res: Response): Promise<void> => {
    const { orgId } = principalOf(res);
    const { chainId } = parseRequest(SystemsQuery, req.query, "query");
    const rows = await systems.list(orgId, chainId);
    const body: z.infer<typeof OrganisationSystemList> = {
      items: rows.map((row) => ({
        chainId: row.chainId,
        address: row.address,
        status: row.status,
        executionId: row.executionId,
        fromHeight: row.fromHeight.toString(),
        removedHeight: row.removedHeight === null ? null : row.removedHeight.toString(),
        failureReason: row.failureReason,
      })),
    };
    res.json(body);
  };
}

/** The OpenAPI tag of the organisations paths. */
export const ORGANISATIONS_TAG = {
  name: "organisations",
  description: "The organisation's system deployments.",
};

/** The organisations module: the key's organisation's system deployments (docs/organisations.md). */
export const ORGANISATION_ROUTES: readonly RouteDeclaration<OrganisationRouteStores>[] = [
  defineRoute<OrganisationRouteStores>({
    method: "get",
    path: "/v1/organisations/systems",
    permission: "read",
    openapi: {
      operationId: "listOrganisationSystems",
      tags: ["organisations"],
      summary: "The organisation's system deployments",
      description:
        "Every deployment of the key's organisation's system contracts (started by `organisation.deploy-system`), " +
        "newest first, optionally on one chain: `active` is the organisation's system on its chain, `replaced` " +
        `an earlier one, \`failed\` one whose execution failed or is gone. ${rolesNote("read")}`,
      request: { query: SystemsQuery },
      responses: {
        200: {
          description: "The deployments.",
          content: { "application/json": { schema: OrganisationSystemList } },
        },
        400: problem("REQUEST_INVALID (field `errors`)."),
      },
    },
    handler: ({ systems }) => listSystems(systems),
  }),
];

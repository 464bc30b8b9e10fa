import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { type Request, type Response, Router } from "express";
import type { z } from "zod";
import type { ApiDeps } from "../../../src/api/api-deps.js";
import { guard, principalOf } from "../../../src/api/auth/authenticate.js";
import { handler, parseRequest } from "../../../src/api/http.js";
import { authProblems, problem, rolesNote } from "../../../src/api/openapi/common.js";
import type { PgOrganisationSystems } from "../store/pg-organisation-systems.js";
import { OrganisationSystemList, SystemsQuery } from "./schemas.js";

/** What the routes read of the deployments. */
type OrganisationSystemsReads = Pick<PgOrganisationSystems, "list">;

/** The organisations module: the key's organisation's system deployments (docs/organisations.md). */
export function organisationsRouter(deps: Pick<ApiDeps, "keys">, systems: OrganisationSystemsReads): Router {
  const router = Router();
  router.get("/v1/organisations/systems", ...guard(deps.keys, "read"), handler(listSystems(systems)));
  return router;
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

export function registerOrganisationsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/v1/organisations/systems",
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
      ...authProblems("read"),
    },
  });
}

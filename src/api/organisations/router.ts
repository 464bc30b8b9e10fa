import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { type Request, type Response, Router } from "express";
import type { z } from "zod";
import { PgOrganisationSystems } from "../../store/pg-organisation-systems.js";
import type { ApiDeps } from "../api-deps.js";
import { guard, principalOf } from "../auth/authenticate.js";
import { handler, parseRequest } from "../http.js";
import { authProblems, problem, rolesNote } from "../openapi/common.js";
import { OrganisationSystemList, SystemsQuery } from "./schemas.js";

/** The organisations module: the key's organisation's system deployments (docs/organisations.md). */
export function organisationsRouter(deps: ApiDeps): Router {
  const router = Router();
  router.get("/v1/organisations/systems", ...guard(deps.keys, "read"), handler(listSystems(deps)));
  return router;
}

/** Every system deployment of the key's organisation (never another's), newest first. */
function listSystems(deps: ApiDeps) {
  const systems = new PgOrganisationSystems(deps.pool);
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

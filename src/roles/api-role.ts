import type { Server } from "node:http";
import express from "express";
import { handleHealthRequest } from "../observability/health-server.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";

/**
 * The api role: Express with health endpoints; the platform routes mount here. Unknown routes
 * answer problem+json (RFC 9457), never an HTML page.
 */
export async function startApiRole(ctx: RoleContext): Promise<RoleHandle> {
  const app = express();
  app.disable("x-powered-by");
  app.get(["/livez", "/readyz"], async (req, res) => {
    await handleHealthRequest(req, res, { checks: ctx.readiness, state: ctx.health });
  });
  app.use((req, res) => {
    res
      .status(404)
      .type("application/problem+json")
      .json({
        type: "urn:tenor:error:NOT_FOUND",
        title: "Not Found",
        status: 404,
        code: "NOT_FOUND",
        detail: `no route for ${req.method} ${req.path}`,
        instance: req.originalUrl,
      });
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(ctx.config.api.port, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  ctx.logger.info("api started", { port: ctx.config.api.port });
  return {
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_WORKFLOWS } from "../../flows/index.js";
import { buildOpenApiDocument } from "../../src/api/openapi/document.js";
import { expressPath } from "../../src/api/route.js";
import { loadConfig } from "../../src/config/load-config.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createPlatformApi } from "../../src/roles/platform-api.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { applicationRoutes } from "../../workers/api-routes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { DECLARED_ROUTES } from "./support/declared-routes.js";

/**
 * Every `/v1` route the app serves is declared (src/api/route.ts), every declaration is served,
 * and the document describes exactly the declared routes: a route mounted beside the declarations,
 * or declared and left out of the app or the document, fails here. The app is only built, never
 * asked anything, so its pool never connects.
 */

const prefix = testRedisPrefix(import.meta.url);
let redis: Redis;
let api: ReturnType<typeof createPlatformApi>;

beforeAll(() => {
  redis = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  const url = "postgres://tenor@127.0.0.1:5432/never-connected";
  const config = loadConfig({ env: { DATABASE_URL: url, REDIS_URL: redisUrl() } });
  api = createPlatformApi({
    settings: config.api,
    pool: createPgPool(url, { applicationName: "tenor-route-declarations-test" }),
    redis,
    prefix,
    registry: new WorkflowRegistry(ALL_WORKFLOWS),
    routes: applicationRoutes,
    logger: createLogger({ level: "error" }),
    readiness: {},
    health: { draining: false },
  });
});

afterAll(async () => {
  await api.close();
  await deleteRedisPrefix(prefix, redis);
  redis.disconnect();
});

interface Layer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** `method path` of every route in the router tree (Express 5: `app.router.stack`). */
function servedRoutes(stack: readonly Layer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      return Object.keys(layer.route.methods).flatMap((method) => paths.map((path) => `${method} ${path}`));
    }
    return layer.handle?.stack ? servedRoutes(layer.handle.stack) : [];
  });
}

/** `/v1/executions/{id}` → a pattern matching the document's concrete paths of the route. */
function templatePattern(path: string): RegExp {
  const escaped = path.replaceAll(/[.*+?^$()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped.replaceAll(/\{[^}]+\}/g, "[^/]+")}$`);
}

describe("route declarations", () => {
  const declared = DECLARED_ROUTES.map((route) => `${route.method} ${expressPath(route.path)}`);

  it("declares each route once", () => {
    expect(new Set(declared).size).toBe(declared.length);
  });

  it("the app serves exactly the declared /v1 routes", () => {
    const stack = (api.app as unknown as { router: { stack: Layer[] } }).router.stack;
    const served = servedRoutes(stack).filter((route) => route.split(" ")[1]?.startsWith("/v1/"));
    expect(served.sort()).toEqual([...declared].sort());
  });

  it("the document describes exactly the declared /v1 routes", () => {
    const doc = buildOpenApiDocument(ALL_WORKFLOWS, applicationRoutes) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/v1/"))
      .flatMap(([path, item]) => Object.keys(item).map((method) => ({ method, path })));
    const routes = DECLARED_ROUTES.map((route) => ({ method: route.method, path: route.path }));
    for (const { method, path } of operations) {
      const owners = routes.filter((r) => r.method === method && templatePattern(r.path).test(path));
      expect(owners, `${method} ${path}`).toHaveLength(1);
    }
    for (const route of routes) {
      const documented = operations.filter(
        (o) => o.method === route.method && templatePattern(route.path).test(o.path),
      );
      expect(documented.length, `${route.method} ${route.path}`).toBeGreaterThan(0);
    }
  });
});

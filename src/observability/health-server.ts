import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A readiness check: resolves when the dependency answers, rejects (or times out) when not. */
export type ReadinessCheck = () => Promise<void>;

export interface HealthState {
  /** Set on SIGTERM: /readyz answers 503 so load balancers stop sending work. */
  draining: boolean;
}

export interface HealthServerOptions {
  port: number;
  host?: string;
  checks: Readonly<Record<string, ReadinessCheck>>;
  state: HealthState;
  /** Each check must answer within this many milliseconds. Default 2000. */
  checkTimeoutMs?: number;
  /** Served at `/metrics` in the Prometheus text format when given. */
  metrics?: Registry;
}

/**
 * `/livez`: the process is up (no dependency touched, so a slow database never restarts pods).
 * `/readyz`: every check passed within its deadline and the process is not draining.
 */
export async function runReadinessChecks(
  checks: Readonly<Record<string, ReadinessCheck>>,
  timeoutMs: number,
): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const results: Record<string, string> = {};
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        results[name] = "ok";
      } catch (error) {
        results[name] = `failed: ${(error as Error).message}`;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ok: Object.values(results).every((r) => r === "ok"), checks: results };
}

/** Handles /livez, /readyz and /metrics; returns false for any other path so a host app can serve it. */
export async function handleHealthRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: Pick<HealthServerOptions, "checks" | "state" | "checkTimeoutMs" | "metrics">,
): Promise<boolean> {
  const path = (req.url ?? "/").split("?")[0];
  if (path === "/metrics" && options.metrics) {
    const text = await options.metrics.metrics();
    res.writeHead(200, { "content-type": options.metrics.contentType, "cache-control": "no-store" });
    res.end(text);
    return true;
  }
  if (path === "/livez") {
    send(res, 200, { status: "ok" });
    return true;
  }
  if (path === "/readyz") {
    if (options.state.draining) {
      send(res, 503, { status: "draining" });
      return true;
    }
    const result = await runReadinessChecks(options.checks, options.checkTimeoutMs ?? 2_000);
    send(res, result.ok ? 200 : 503, { status: result.ok ? "ready" : "not ready", checks: result.checks });
    return true;
  }
  return false;
}

/** A small HTTP server with only the health endpoints, for roles that serve no API. */
export async function startHealthServer(
  options: HealthServerOptions,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    handleHealthRequest(req, res, options)
      .then((handled) => {
        if (!handled) send(res, 404, { status: "not found" });
      })
      .catch(() => send(res, 500, { status: "error" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "0.0.0.0", () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

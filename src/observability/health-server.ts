import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { PROCESS_ERRORS } from "../errors/process-errors.js";
import { TenorError } from "../errors/tenor-error.js";

/** A readiness check: resolves when the dependency answers, rejects (or times out) when not. */
export type ReadinessCheck = () => Promise<void>;

export interface HealthState {
  /** Set on SIGTERM: /readyz answers 503 so load balancers stop sending work. */
  draining: boolean;
  /** True while the role starts (its port is bound first): /readyz answers 503 `starting`. */
  starting?: boolean;
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
  /** The configuration key or variable that chose `port`, named when it cannot be bound. */
  portSetting?: string;
  /**
   * Why this process refuses every request right now (the api's admission control), or null:
   * /readyz then answers 503 `overloaded` with it as `reason`, so readiness never says 200 to a
   * load balancer whose next request would be refused.
   */
  overload?: () => string | null;
}

/**
 * `/livez`: the process is up (no dependency touched, so a slow database never restarts pods).
 * `/readyz`: the process is not starting, not draining, not refusing work (`overload`), and every
 * check passed within its deadline.
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
  options: Pick<HealthServerOptions, "checks" | "state" | "checkTimeoutMs" | "metrics" | "overload">,
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
    if (options.state.starting) {
      send(res, 503, { status: "starting" });
      return true;
    }
    if (options.state.draining) {
      send(res, 503, { status: "draining" });
      return true;
    }
    const reason = options.overload?.() ?? null;
    if (reason !== null) {
      send(res, 503, { status: "overloaded", reason });
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
  await listenOn(server, options.port, options.host ?? "0.0.0.0", options.portSetting);
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * Binds `server` to `port`. A port already in use or not permitted fails at once with the
 * non-retryable `PORT_UNAVAILABLE`, naming the port and the setting that chose it: a bind failure
 * is not a dependency outage, and startup must not retry it.
 */
export async function listenOn(server: Server, port: number, host: string, setting?: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      const named = setting ? ` (${setting})` : "";
      reject(
        error.code === "EADDRINUSE" || error.code === "EACCES"
          ? new TenorError(
              PROCESS_ERRORS.PORT_UNAVAILABLE,
              error.code === "EADDRINUSE"
                ? `port ${port}${named} is already in use by another process`
                : `port ${port}${named} may not be bound by this user`,
              { retryable: false, details: { port, host, errno: error.code } },
            )
          : error,
      );
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

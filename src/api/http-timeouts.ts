import type { Server } from "node:http";

/** `api.http.*` of the configuration, in milliseconds (src/config/schema.ts has the rules). */
export interface HttpTimeouts {
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/**
 * Sets the API server's timeouts from configuration. Node's defaults (5 s keep-alive) are shorter
 * than a load balancer's idle timeout, so the balancer reuses a socket Node is closing and the
 * client sees a reset; keep-alive above the balancer's, headers above keep-alive, avoids that.
 */
export function applyHttpTimeouts(server: Server, timeouts: HttpTimeouts): void {
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  server.headersTimeout = timeouts.headersTimeoutMs;
  server.requestTimeout = timeouts.requestTimeoutMs;
}

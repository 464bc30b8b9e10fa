import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { applyHttpTimeouts } from "../../src/api/http-timeouts.js";
import { ConfigError, loadConfig } from "../../src/config/index.js";
import { EventLoopLagMonitor } from "../../src/observability/event-loop-lag.js";

const env = { DATABASE_URL: "postgresql://p@h/d", REDIS_URL: "redis://h:6379" };

describe("API HTTP timeouts", () => {
  it("default above a load balancer's idle timeout, headers above keep-alive, and reach the server", () => {
    const { http } = loadConfig({ env }).api;
    expect(http).toEqual({ keepAliveTimeoutMs: 65_000, headersTimeoutMs: 66_000, requestTimeoutMs: 300_000 });
    const server = createServer();
    applyHttpTimeouts(server, http);
    expect([server.keepAliveTimeout, server.headersTimeout, server.requestTimeout]).toEqual([
      65_000, 66_000, 300_000,
    ]);
  });

  it("refuse headersTimeoutMs at or below keepAliveTimeoutMs", () => {
    const load = () =>
      loadConfig({
        env: { ...env, TENOR_CONFIG: "/t.yaml" },
        readFile: () => "api:\n  http: { keepAliveTimeoutMs: 65000, headersTimeoutMs: 65000 }\n",
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow("api.http.headersTimeoutMs = 65000: must be > api.http.keepAliveTimeoutMs (65000)");
  });
});

describe("EventLoopLagMonitor", () => {
  it("reports a blocked loop's lag, also before its timer catches up", () => {
    const monitor = new EventLoopLagMonitor(100, 1_000);
    const until = performance.now() + 400;
    while (performance.now() < until) {
      // block the loop, as a CPU-bound request would
    }
    expect(monitor.lagMs()).toBeGreaterThanOrEqual(250);
    monitor.stop();
  });

  it("forgets, once restarted, the lag of a loop blocked before", () => {
    const monitor = new EventLoopLagMonitor(100, 1_000);
    const until = performance.now() + 400;
    while (performance.now() < until) {
      // block the loop, as startup work does
    }
    monitor.restart();
    expect(monitor.lagMs()).toBe(0);
    monitor.stop();
  });
});

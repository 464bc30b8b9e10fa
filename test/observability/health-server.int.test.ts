import { afterEach, describe, expect, it } from "vitest";
import { type HealthState, startHealthServer } from "../../src/observability/health-server.js";
import { freePort } from "../support/ports.js";

const servers: { close(cb: () => void): void }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function serve(
  checks: Record<string, () => Promise<void>>,
  state: HealthState = { draining: false },
  overload?: () => string | null,
) {
  const port = await freePort();
  const { server } = await startHealthServer({
    port,
    host: "127.0.0.1",
    checks,
    state,
    checkTimeoutMs: 200,
    ...(overload ? { overload } : {}),
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${port}`, state };
}

describe("health server", () => {
  it("answers /livez without touching dependencies", async () => {
    let called = false;
    const { url } = await serve({
      db: async () => {
        called = true;
      },
    });
    const res = await fetch(`${url}/livez`);
    expect(res.status).toBe(200);
    expect(called).toBe(false);
  });

  it("answers /readyz 200 only when every check passes", async () => {
    const { url } = await serve({ postgresql: async () => {}, redis: async () => {} });
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: { postgresql: "ok", redis: "ok" } });
  });

  it("answers 503 naming the failing and the hanging check", async () => {
    const { url } = await serve({
      postgresql: async () => {
        throw new Error("ECONNREFUSED");
      },
      redis: () => new Promise(() => {}),
    });
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { checks: Record<string, string> };
    expect(body.checks.postgresql).toBe("failed: ECONNREFUSED");
    expect(body.checks.redis).toContain("no answer within 200 ms");
  });

  it("answers 503 while draining, even with healthy dependencies", async () => {
    const { url, state } = await serve({ postgresql: async () => {} });
    state.draining = true;
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: "draining" });
  });

  it("answers 503 overloaded with the reason while the process refuses work, and 200 once it does not", async () => {
    let reason: string | null = "event_loop_lag";
    const { url } = await serve({ postgresql: async () => {} }, { draining: false }, () => reason);
    const refused = await fetch(`${url}/readyz`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ status: "overloaded", reason: "event_loop_lag" });
    reason = null;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";

/** Configuration keys of the operations surface: pool size, HTTP timeouts, admission, startup. */

const base = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
};

function issuesOf(env: Record<string, string>, yaml = ""): string[] {
  try {
    loadConfig({ env: { ...base, TENOR_CONFIG: "/etc/tenor.yaml", ...env }, readFile: () => yaml });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues.map((i) => `${i.key} = ${String(i.value)}: ${i.rule}`);
  }
  return [];
}

describe("database.poolMax", () => {
  it("defaults to 20 and is set by TENOR_DATABASE_POOL_MAX", () => {
    expect(loadConfig({ env: base }).database.poolMax).toBe(20);
    expect(loadConfig({ env: { ...base, TENOR_DATABASE_POOL_MAX: "7" } }).database.poolMax).toBe(7);
  });

  it("refuses zero, naming the key, the variable, the value and the rule", () => {
    expect(issuesOf({ TENOR_DATABASE_POOL_MAX: "0" })).toEqual([
      "database.poolMax (TENOR_DATABASE_POOL_MAX) = 0: 1 ≤ v ≤ 1000",
    ]);
  });
});

describe("shutdown and startup", () => {
  it("defaults to no readiness delay and a 60 s relaunch budget", () => {
    const config = loadConfig({ env: base });
    expect(config.shutdown).toEqual({ graceMs: 10_000, readinessDelayMs: 0 });
    expect(config.startup).toEqual({ relaunchBudgetMs: 60_000, initialDelayMs: 500, maxDelayMs: 10_000 });
    expect(
      loadConfig({ env: { ...base, TENOR_STARTUP_RELAUNCH_BUDGET_MS: "0" } }).startup.relaunchBudgetMs,
    ).toBe(0);
  });

  it("refuses a readiness delay that would eat the whole grace period", () => {
    expect(issuesOf({}, "shutdown: { graceMs: 1000, readinessDelayMs: 1000 }\n")).toEqual([
      "shutdown.readinessDelayMs = 1000: must be < shutdown.graceMs (1000)",
    ]);
  });
});

describe("api.admission", () => {
  it("defaults to bounds that refuse only past saturation", () => {
    expect(loadConfig({ env: base }).api.admission).toEqual({
      maxPoolWaitMs: 250,
      maxInFlight: 0,
      maxEventLoopUtilization: 0,
      maxEventLoopLagMs: 500,
      retryAfterSeconds: 1,
    });
  });

  it("refuses the removed maxPoolWaiting with the key that replaced it, rather than ignoring it", () => {
    expect(issuesOf({}, "api:\n  admission: { maxPoolWaiting: 32 }\n")).toEqual([
      "api.admission.maxPoolWaiting = 32: was removed: admission now bounds the expected wait for a pool connection, not the number waiting; set api.admission.maxPoolWaitMs (ms, default 250, 0 disables) instead",
    ]);
  });

  it("takes maxPoolWaitMs 0 to turn the pool bound off", () => {
    expect(issuesOf({}, "api:\n  admission: { maxPoolWaitMs: 0 }\n")).toEqual([]);
    expect(issuesOf({}, "api:\n  admission: { maxPoolWaitMs: -1 }\n")).toEqual([
      "api.admission.maxPoolWaitMs = -1: must be ≥ 0",
    ]);
  });

  it("refuses a Retry-After of zero", () => {
    expect(issuesOf({}, "api:\n  admission: { retryAfterSeconds: 0 }\n")).toEqual([
      "api.admission.retryAfterSeconds = 0: must be ≥ 1",
    ]);
  });

  it("takes an event-loop utilization between 0 and 1", () => {
    expect(issuesOf({}, "api:\n  admission: { maxEventLoopUtilization: 1.5 }\n")).toEqual([
      "api.admission.maxEventLoopUtilization = 1.5: 0 ≤ v ≤ 1",
    ]);
  });
});

/** The Ledger Index's keys (`indexer.*`, docs/ledger-index.md). */
describe("indexer", () => {
  it("defaults to a 1 s poll, 100-block batches, 2,000-block ranges and 30 s leases", () => {
    expect(loadConfig({ env: base }).indexer).toEqual({
      healthPort: 3002,
      pollIntervalMs: 1_000,
      batchBlocks: 100,
      rangeBlocks: 2_000,
      leaseMs: 30_000,
    });
  });

  it("refuses values out of range, each named", () => {
    expect(
      issuesOf(
        {},
        "indexer: { pollIntervalMs: 10, batchBlocks: 0, rangeBlocks: 1.5, leaseMs: 100 }\n",
      ).sort(),
    ).toEqual(
      [
        "indexer.batchBlocks = 0: 1 ≤ v ≤ 10000",
        "indexer.leaseMs = 100: 500 ≤ v ≤ 600000",
        "indexer.pollIntervalMs = 10: 50 ≤ v ≤ 60000",
        "indexer.rangeBlocks = 1.5: must be an integer",
      ].sort(),
    );
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { loadConfig } from "../../src/config/load-config.js";
import { reservedSessionOptions } from "../../src/ownership/reserved-connection.js";
import { fnv1a32, shardOf, shardPreference } from "../../src/ownership/shard-map.js";
import { resolveOwnershipTimings } from "../../src/ownership/shard-owner.js";

describe("shardOf", () => {
  it("is FNV-1a 32 (frozen: changing it moves every key)", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    expect(shardOf("chain:1", 64)).toBe(fnv1a32("chain:1") % 64);
  });

  it("maps every key into [0, shardCount) and spreads keys over the shards", () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) {
      const shard = shardOf(`org:${i}:chain:${i % 7}`, 16);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(16);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    for (const n of counts) expect(n).toBeGreaterThan(800);
  });

  it("refuses a shard count that is not a positive integer", () => {
    expect(() => shardOf("k", 0)).toThrow(RangeError);
    expect(() => shardOf("k", 1.5)).toThrow(RangeError);
  });

  it("ranks shards differently per replica", () => {
    const rank = (id: string) =>
      Array.from({ length: 8 }, (_, s) => s).sort((a, b) => shardPreference(id, b) - shardPreference(id, a));
    expect(rank("a")).not.toEqual(rank("b"));
  });
});

describe("ownership timings", () => {
  it("derives the lock deadline as min(refresh, liveness / 3)", () => {
    expect(
      resolveOwnershipTimings({ refreshIntervalMs: 2_000, livenessWindowMs: 10_000 }).lockDeadlineMs,
    ).toBe(2_000);
    expect(
      resolveOwnershipTimings({ refreshIntervalMs: 2_000, livenessWindowMs: 6_000 }).lockDeadlineMs,
    ).toBe(2_000);
    expect(resolveOwnershipTimings({ refreshIntervalMs: 300, livenessWindowMs: 600 }).lockDeadlineMs).toBe(
      200,
    );
  });

  it("sets the server-side dead-peer detection and disables server timers on the reserved session", () => {
    const options = reservedSessionOptions(10_000);
    expect(options).toContain("-c tcp_user_timeout=10000");
    expect(options).toContain("-c idle_session_timeout=0");
    expect(options).toContain("-c client_connection_check_interval=1000");
  });

  it("validates the refresh interval and the liveness window", () => {
    const env = { DATABASE_URL: "postgresql://x/y", REDIS_URL: "redis://x" };
    const config = loadConfig({ env });
    expect(config.durable.sharding).toEqual({
      shardCount: 64,
      refreshIntervalMs: 2_000,
      livenessWindowMs: 10_000,
    });
    let error: unknown;
    try {
      loadConfig({
        env: { ...env, TENOR_CONFIG: "x.yaml" },
        readFile: () => "durable:\n  sharding:\n    refreshIntervalMs: 5000\n    livenessWindowMs: 10000\n",
      });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues[0]).toMatchObject({
      key: "durable.sharding.livenessWindowMs",
      value: 10_000,
      rule: "must be ≥ 3 × durable.sharding.refreshIntervalMs (15000)",
    });
  });
});

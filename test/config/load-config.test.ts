import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseRole } from "../../src/config/index.js";

const base = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
};

function issuesOf(run: () => unknown): { key: string; value: unknown; rule: string }[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error("expected a ConfigError");
}

function withFile(yaml: string, env: Record<string, string> = {}) {
  return loadConfig({ env: { ...base, TENOR_CONFIG: "/etc/tenor.yaml", ...env }, readFile: () => yaml });
}

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig({ env: base });
    expect(config.durable.sharding.shardCount).toBe(64);
    expect(config.durable.confirmationWatcher.intervalMs).toBe(250);
    expect(config.monitoring.blockchainHealthCollector.intervalSeconds).toBe(60);
    expect(config.durable.retention.days).toBe(30);
    expect(config.api.port).toBe(3000);
    expect(config.api.rateLimit).toEqual({ max: 2_000, windowSeconds: 10 });
    expect(config.redisPrefix).toBe("tenor");
  });

  it("returns a deeply frozen object", () => {
    const config = loadConfig({ env: base });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.durable.sharding)).toBe(true);
  });

  it("reads nested YAML keys and lets the environment win over the file", () => {
    const config = withFile("durable:\n  sharding:\n    shardCount: 16\napi:\n  port: 4000\n", {
      TENOR_API_PORT: "5000",
    });
    expect(config.durable.sharding.shardCount).toBe(16);
    expect(config.api.port).toBe(5000);
  });

  it("refuses a missing DATABASE_URL, never defaulting a secret", () => {
    const issues = issuesOf(() => loadConfig({ env: { REDIS_URL: base.REDIS_URL } }));
    expect(issues).toEqual([
      expect.objectContaining({ key: "databaseUrl (DATABASE_URL)", rule: "is required" }),
    ]);
  });

  it("enforces 50 ≤ confirmationWatcher.intervalMs ≤ 60000", () => {
    for (const bad of [49, 60001]) {
      const issues = issuesOf(() => withFile(`durable:\n  confirmationWatcher:\n    intervalMs: ${bad}\n`));
      expect(issues[0]).toMatchObject({
        key: "durable.confirmationWatcher.intervalMs",
        value: bad,
        rule: "50 ≤ v ≤ 60000",
      });
    }
    expect(
      withFile("durable:\n  confirmationWatcher:\n    intervalMs: 50\n").durable.confirmationWatcher
        .intervalMs,
    ).toBe(50);
  });

  it("enforces 1000 ≤ nonceRecovery.intervalMs ≤ 3600000, default one minute", () => {
    expect(loadConfig({ env: base }).durable.nonceRecovery.intervalMs).toBe(60_000);
    for (const bad of [999, 3_600_001]) {
      const issues = issuesOf(() => withFile(`durable:\n  nonceRecovery:\n    intervalMs: ${bad}\n`));
      expect(issues[0]).toMatchObject({
        key: "durable.nonceRecovery.intervalMs",
        value: bad,
        rule: "1000 ≤ v ≤ 3600000",
      });
    }
  });

  it("requires a health interval below 60 to divide 60, and one at or above 60 to be whole minutes", () => {
    const key = "monitoring.blockchainHealthCollector.intervalSeconds";
    for (const good of [1, 15, 30, 60, 120]) {
      expect(
        withFile(`monitoring:\n  blockchainHealthCollector:\n    intervalSeconds: ${good}\n`).monitoring
          .blockchainHealthCollector.intervalSeconds,
      ).toBe(good);
    }
    for (const bad of [7, 45, 90]) {
      const issues = issuesOf(() =>
        withFile(`monitoring:\n  blockchainHealthCollector:\n    intervalSeconds: ${bad}\n`),
      );
      expect(issues[0]?.key).toBe(key);
      expect(issues[0]?.rule).toContain("below 60 must divide 60");
    }
  });

  it("reports every violation at once, with key, value and rule", () => {
    const issues = issuesOf(() =>
      withFile("durable:\n  sharding:\n    shardCount: 0\n  retention:\n    days: -1\n", {
        TENOR_API_PORT: "70000",
      }),
    );
    expect(issues.map((i) => i.key).sort()).toEqual([
      "api.port (TENOR_API_PORT)",
      "durable.retention.days",
      "durable.sharding.shardCount",
    ]);
    const message = new ConfigError(issues).message;
    expect(message).toContain('api.port (TENOR_API_PORT) = "70000": must be 1–65535');
    expect(message).toContain("durable.sharding.shardCount = 0: must be ≥ 1");
  });

  it("names an unknown key instead of ignoring a typo", () => {
    const issues = issuesOf(() => withFile("durable:\n  sharding:\n    shardCont: 8\n"));
    expect(issues).toEqual([
      { key: "durable.sharding.shardCont", value: 8, rule: "is not a known configuration key" },
    ]);
  });

  it("refuses an unreadable or malformed file, naming TENOR_CONFIG", () => {
    const unreadable = issuesOf(() =>
      loadConfig({
        env: { ...base, TENOR_CONFIG: "/nope.yaml" },
        readFile: () => {
          throw new Error("ENOENT");
        },
      }),
    );
    expect(unreadable[0]).toMatchObject({ key: "TENOR_CONFIG", value: "/nope.yaml" });
    expect(issuesOf(() => withFile("durable: [unclosed"))[0]?.rule).toContain("must be valid YAML");
    expect(issuesOf(() => withFile("- a list"))[0]?.rule).toContain("mapping");
  });

  it("never prints the database password of a refused URL", () => {
    const url = "mysql://svc:S3cretPw@db.internal:5432/tenor";
    const error = (() => {
      try {
        loadConfig({ env: { ...base, DATABASE_URL: url } });
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error("expected a ConfigError");
    })();
    expect(error.message).toContain("databaseUrl (DATABASE_URL)");
    expect(error.message).toContain("mysql://svc:[redacted]@db.internal");
    expect(
      JSON.stringify({ message: error.message, details: error.details, stack: error.stack }),
    ).not.toContain("S3cretPw");
  });

  it("reads api.rateLimit from the file and names a bad window", () => {
    expect(withFile("api:\n  rateLimit:\n    max: 5\n").api.rateLimit).toEqual({ max: 5, windowSeconds: 10 });
    expect(issuesOf(() => withFile("api:\n  rateLimit:\n    windowSeconds: 0\n"))).toEqual([
      { key: "api.rateLimit.windowSeconds", value: 0, rule: "must be ≥ 1" },
    ]);
  });

  it("refuses URLs of the wrong scheme", () => {
    const issues = issuesOf(() => loadConfig({ env: { ...base, REDIS_URL: "http://localhost" } }));
    expect(issues[0]?.key).toBe("redisUrl (REDIS_URL)");
  });
});

describe("parseRole", () => {
  it("accepts exactly api, runner and indexer", () => {
    expect(parseRole("api")).toBe("api");
    expect(parseRole("runner")).toBe("runner");
    expect(parseRole("indexer")).toBe("indexer");
  });

  it("refuses a combined, unknown or missing role, naming the allowed values", () => {
    for (const bad of ["combined", "", undefined, "API"]) {
      expect(() => parseRole(bad)).toThrow(/must be one of api, runner, indexer/);
    }
  });
});

/** The configuration keys of the performance and scale-out work (docs/performance.md). */
describe("Redis Cluster settings", () => {
  it("default to a single Redis; TENOR_REDIS_CLUSTER=true with a hash-tagged prefix selects a cluster", () => {
    expect(loadConfig({ env: base }).redisCluster).toBe(false);
    const config = loadConfig({
      env: { ...base, TENOR_REDIS_CLUSTER: "true", TENOR_REDIS_PREFIX: "{tenor}" },
    });
    expect(config.redisCluster).toBe(true);
    expect(config.redisPrefix).toBe("{tenor}");
  });

  it("refuses a cluster without a hash tag in the prefix, naming key, value and rule", () => {
    const issues = issuesOf(() =>
      loadConfig({ env: { ...base, TENOR_REDIS_CLUSTER: "true", TENOR_REDIS_PREFIX: "tenor" } }),
    );
    expect(issues).toEqual([
      {
        key: "redisPrefix (TENOR_REDIS_PREFIX)",
        value: "tenor",
        rule: "must hold a hash tag such as {tenor} when redisCluster is true (one slot per deployment)",
      },
    ]);
  });

  it("refuses malformed hash tags and cluster flags", () => {
    for (const prefix of ["{}", "{a}{b}", "a{b", "b}"]) {
      const issues = issuesOf(() => loadConfig({ env: { ...base, TENOR_REDIS_PREFIX: prefix } }));
      expect(issues.map((i) => i.key)).toEqual(["redisPrefix (TENOR_REDIS_PREFIX)"]);
    }
    const flag = issuesOf(() => loadConfig({ env: { ...base, TENOR_REDIS_CLUSTER: "yes" } }));
    expect(flag.map((i) => i.key)).toEqual(["redisCluster (TENOR_REDIS_CLUSTER)"]);
  });
});

describe("push results and liveness", () => {
  it("defaults api.waitFallbackPollMs to 1 s and durable.liveness.checkIntervalMs to 250 ms", () => {
    const config = loadConfig({ env: base });
    expect(config.api.waitFallbackPollMs).toBe(1_000);
    expect(config.durable.liveness.checkIntervalMs).toBe(250);
  });

  it("bounds both, naming the rule", () => {
    const issues = issuesOf(() =>
      withFile("api: { waitFallbackPollMs: 5 }\ndurable: { liveness: { checkIntervalMs: 70000 } }"),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        { key: "api.waitFallbackPollMs", value: 5, rule: "10 ≤ v ≤ 600000" },
        { key: "durable.liveness.checkIntervalMs", value: 70_000, rule: "50 ≤ v ≤ 60000" },
      ]),
    );
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";

/** The configuration keys of the performance and scale-out work (docs/performance.md). */

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

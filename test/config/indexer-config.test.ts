import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";

/** The Ledger Index's keys (`indexer.*`, docs/ledger-index.md): defaults and refusals naming key, value and rule. */

const base = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
};

function issuesOf(yaml: string): string[] {
  try {
    loadConfig({ env: { ...base, TENOR_CONFIG: "/etc/tenor.yaml" }, readFile: () => yaml });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues.map((i) => `${i.key} = ${String(i.value)}: ${i.rule}`);
  }
  return [];
}

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
      issuesOf("indexer: { pollIntervalMs: 10, batchBlocks: 0, rangeBlocks: 1.5, leaseMs: 100 }\n").sort(),
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

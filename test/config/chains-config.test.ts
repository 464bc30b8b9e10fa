import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";
import { readSecret } from "../../src/config/secret.js";

const env = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
  TENOR_CONFIG: "/etc/tenor.yaml",
};

const load = (document: unknown) => loadConfig({ env, readFile: () => JSON.stringify(document) });

function issuesOf(run: () => unknown) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error("expected a ConfigError");
}

const chain = { id: 31337, name: "local", rpcUrls: ["http://127.0.0.1:8545"] };

describe("chains configuration", () => {
  it("defaults to no chains, and fills each chain's finality, watcher and fee defaults", () => {
    expect(load({}).chains).toEqual([]);
    const [parsed] = load({ chains: [chain] }).chains;
    expect(parsed).toMatchObject({
      id: 31337,
      finality: { depth: 1 },
      rpcTimeoutMs: 10_000,
      maxPendingPerSender: 16,
      confirmationWatcher: {},
      fees: { bumpPercent: 12.5, maxBumps: 3, stuckAfterMs: 30_000 },
    });
    expect(load({ chains: [{ ...chain, finality: "finalized" }] }).chains[0]?.finality).toBe("finalized");
  });

  it("names key, value and rule for each broken chain field", () => {
    const issues = issuesOf(() =>
      load({
        chains: [
          { ...chain, rpcUrls: ["ftp://x"], finality: { depth: -1 }, fees: { bumpPercent: 10 } },
          { ...chain, confirmationWatcher: { intervalMs: 10 }, rpcTimeoutMs: 50 },
        ],
      }),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        { key: "chains.0.rpcUrls.0", value: "ftp://x", rule: "must be an http(s):// or ws(s):// URL" },
        { key: "chains.0.finality.depth", value: -1, rule: "0 ≤ v ≤ 10000" },
        expect.objectContaining({
          key: "chains.0.fees.bumpPercent",
          value: 10,
          rule: expect.stringContaining("12.5"),
        }),
        { key: "chains.1.confirmationWatcher.intervalMs", value: 10, rule: "50 ≤ v ≤ 60000" },
        { key: "chains.1.rpcTimeoutMs", value: 50, rule: "100 ≤ v ≤ 120000" },
        { key: "chains.1.id", value: 31337, rule: "must be unique among chains" },
      ]),
    );
  });

  it("bounds maxPendingPerSender to 1..1024 and names the rule", () => {
    expect(load({ chains: [{ ...chain, maxPendingPerSender: 1 }] }).chains[0]?.maxPendingPerSender).toBe(1);
    for (const value of [0, 1025, 2.5]) {
      expect(issuesOf(() => load({ chains: [{ ...chain, maxPendingPerSender: value }] }))).toEqual([
        {
          key: "chains.0.maxPendingPerSender",
          value,
          rule: Number.isInteger(value) ? "1 ≤ v ≤ 1024" : "must be an integer",
        },
      ]);
    }
  });

  it("refuses a finality that is neither a depth nor finalized", () => {
    expect(issuesOf(() => load({ chains: [{ ...chain, finality: "safe" }] }))[0]).toMatchObject({
      key: "chains.0.finality",
      value: "safe",
      rule: expect.stringContaining('"finalized"'),
    });
  });

  it("validates signers by kind", () => {
    const signers = load({
      signers: [
        { id: "treasury", kind: "local", privateKey: { env: "TREASURY_KEY" } },
        {
          id: "vault",
          kind: "custody",
          orgId: "acme",
          address: "0x00000000000000000000000000000000000000aa",
          baseUrl: "http://127.0.0.1:9000",
          apiKey: { file: "/run/secrets/custody" },
        },
      ],
    }).signers;
    expect(signers[1]).toMatchObject({ kind: "custody", pollBudget: 60, requestTimeoutMs: 10_000 });
    const issues = issuesOf(() => load({ signers: [{ id: "x", kind: "hsm" }] }));
    expect(issues[0]).toMatchObject({
      key: "signers.0.kind",
      rule: expect.stringContaining('"local" or "custody"'),
    });
  });
});

describe("secrets", () => {
  it("reads from env or file and never prints the value", () => {
    const key = readSecret("signers.0.privateKey", { env: "K" }, { env: { K: " 0xabc\n" } });
    expect(key.reveal()).toBe("0xabc");
    for (const printed of [String(key), JSON.stringify({ key }), inspect({ key })]) {
      expect(printed).not.toContain("0xabc");
      expect(printed).toContain("env:K");
    }
    const fromFile = readSecret("k", { file: "/s" }, { env: {}, readFile: () => "secret\n" });
    expect(fromFile.reveal()).toBe("secret");
  });

  it("refuses a missing or empty secret, naming the key and the source", () => {
    expect(issuesOf(() => readSecret("signers.0.privateKey", { env: "K" }, { env: {} }))).toEqual([
      // The value of a secret-named key is redacted; the rule still names where it was read from.
      {
        key: "signers.0.privateKey",
        value: "[redacted]",
        rule: "must be set and non-empty (read from env:K)",
      },
    ]);
    const unreadable = issuesOf(() =>
      readSecret(
        "k",
        { file: "/nope" },
        {
          env: {},
          readFile: () => {
            throw new Error("ENOENT");
          },
        },
      ),
    );
    expect(unreadable[0]?.rule).toContain("ENOENT");
  });
});

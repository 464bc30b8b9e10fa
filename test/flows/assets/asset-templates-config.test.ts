import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/index.js";

/** `assetTemplates`: defaults, and every broken field named with its value and rule. */

const env = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
  TENOR_CONFIG: "/etc/tenor.yaml",
};
const load = (document: unknown) => loadConfig({ env, readFile: () => JSON.stringify(document) });

const chains = [{ id: 31337, name: "local", rpcUrls: ["http://127.0.0.1:8545"] }];
const signers = [{ id: "issuer", kind: "local", orgId: "acme", privateKey: { env: "ISSUER_KEY" } }];
const template = {
  id: "acme-bond",
  kind: "bond",
  orgId: "acme",
  chainId: 31337,
  signerId: "issuer",
  resolver: "0x00000000000000000000000000000000000000aa",
  stalenessSeconds: 3600,
};

function issuesOf(document: unknown) {
  try {
    load(document);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error("expected a ConfigError");
}

describe("assetTemplates configuration", () => {
  it("defaults to none, and fills a template's decimals", () => {
    expect(load({}).assetTemplates).toEqual([]);
    expect(load({ chains, signers, assetTemplates: [template] }).assetTemplates).toEqual([
      { ...template, tokenDecimals: 18, priceDecimals: 8 },
    ]);
  });

  it("names key, value and rule for each broken template field", () => {
    const issues = issuesOf({
      chains,
      signers,
      assetTemplates: [{ ...template, kind: "share", resolver: "0x12", stalenessSeconds: 0 }],
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        { key: "assetTemplates.0.kind", value: "share", rule: 'must be "bond" or "fund"' },
        { key: "assetTemplates.0.resolver", value: "0x12", rule: "must be a 0x-prefixed 20-byte address" },
        { key: "assetTemplates.0.stalenessSeconds", value: 0, rule: "1 ≤ v ≤ 31536000" },
      ]),
    );
    expect(issuesOf({ chains, signers, assetTemplates: [template, template] })).toEqual([
      { key: "assetTemplates.1.id", value: "acme-bond", rule: "must be unique among asset templates" },
    ]);
    const crossChecks = issuesOf({
      chains,
      signers,
      assetTemplates: [
        { ...template, chainId: 5, signerId: "nobody" },
        { ...template, id: "other", orgId: "globex" },
      ],
    });
    expect(crossChecks).toEqual([
      { key: "assetTemplates.0.chainId", value: 5, rule: "must name a configured chain" },
      {
        key: "assetTemplates.0.signerId",
        value: "nobody",
        rule: "must name a configured signer of the template's orgId",
      },
      {
        key: "assetTemplates.1.signerId",
        value: "issuer",
        rule: "must name a configured signer of the template's orgId",
      },
    ]);
  });
});

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ADDRESS_MODULE, addressViolations, NOT_CHAIN_ADDRESSES } from "./address-rules.js";
import { sourceFiles } from "./import-graph.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("addresses", () => {
  it("are never cast, and lower-cased only in store folders", () => {
    const files = sourceFiles(ROOT, ["src", "flows", "workers"]);
    expect(files.length).toBeGreaterThan(100);
    const violations = files.flatMap((file) =>
      addressViolations(file, readFileSync(path.join(ROOT, file), "utf8")),
    );
    expect(violations).toEqual([]);
  });

  it("every allow-listed file still exists", () => {
    const files = new Set(sourceFiles(ROOT, ["src", "flows", "workers"]));
    for (const file of Object.keys(NOT_CHAIN_ADDRESSES)) expect(files.has(file), file).toBe(true);
  });

  it("catches casts and address lower-casing in planted text", () => {
    const planted = [
      "const a = input.to as Address;",
      "const list = xs as Address[];",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: planted source text, not a template
      "const h = raw as `0x${string}`;",
      "const k = signer.address.toLowerCase();",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: planted source text, not a template
      "const s = `${e.args.subject.toLowerCase()}/1`;",
      "const p = input.paymentToken?.toLowerCase();",
      "const fine = code.toLowerCase();",
    ].join("\n");
    expect(addressViolations("flows/example/planted.ts", planted)).toEqual([
      "flows/example/planted.ts:1: casts to an address type (build a ChainAddress)",
      "flows/example/planted.ts:2: casts to an address type (build a ChainAddress)",
      "flows/example/planted.ts:3: casts to an address type (build a ChainAddress)",
      "flows/example/planted.ts:4: address.toLowerCase() (use addressText, or addressKey in a store)",
      "flows/example/planted.ts:5: subject.toLowerCase() (use addressText, or addressKey in a store)",
      "flows/example/planted.ts:6: paymentToken.toLowerCase() (use addressText, or addressKey in a store)",
    ]);
  });

  it("lets store folders and the address module lower-case, never cast", () => {
    const text = "const k = holder.toLowerCase();\nconst a = x as Address;";
    expect(addressViolations("src/ledger-index/store/reads.ts", text)).toEqual([
      "src/ledger-index/store/reads.ts:2: casts to an address type (build a ChainAddress)",
    ]);
    expect(addressViolations(ADDRESS_MODULE, text)).toEqual([]);
  });
});

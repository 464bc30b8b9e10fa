import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileContracts } from "../../scripts/contracts/compile-contracts.js";
import * as checkedIn from "../../src/chain/contracts/artifacts.js";
import { repoRoot } from "../support/processes.js";

describe("checked-in contract artifacts", () => {
  it("match a fresh solc build of contracts/*.sol (run `npm run contracts:build` when this fails)", () => {
    const fresh = compileContracts(path.join(repoRoot, "contracts"));
    expect(JSON.parse(JSON.stringify({ ...checkedIn }))).toEqual(fresh);
  }, 30_000);
});

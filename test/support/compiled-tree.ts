import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../../", import.meta.url).pathname;

/**
 * What the runtime image holds, laid out in a temporary directory: a copy of dist/ and prisma/,
 * package.json, and node_modules (linked). No src/, no scripts/, no tsconfig: a process started
 * here that still needed the source tree or tsx would fail. Builds dist/ first when it is missing
 * (CI builds it before the tests, see .ci/run).
 */
export function compiledTree(): { dir: string; scripts: Record<string, string> } {
  if (!existsSync(join(root, "dist/workers/main.js"))) {
    execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
  }
  const dir = mkdtempSync(join(tmpdir(), "tenor-image-"));
  cpSync(join(root, "dist"), join(dir, "dist"), { recursive: true });
  cpSync(join(root, "prisma"), join(dir, "prisma"), { recursive: true });
  cpSync(join(root, "package.json"), join(dir, "package.json"));
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  const { scripts } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  return { dir, scripts };
}

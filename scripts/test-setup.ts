/**
 * The test command's setup step (`npm test` runs it first, through `pretest`): installs the suite's
 * system packages through apt when it can (root, apt-get present) and otherwise stops before any
 * test with one line naming what is missing and the command that installs it (exit 1). The decision
 * is scripts/test-setup/system-packages.ts; this file only reads the machine and runs apt.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import process from "node:process";
import { planSystemPackages } from "./test-setup/system-packages.js";

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};
const onPath = (name: string) =>
  (process.env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && executable(join(dir, name)));

const plan = planSystemPackages({
  hasBinary: executable,
  isRoot: process.getuid?.() === 0,
  hasAptGet: onPath("apt-get"),
});

if (plan.action === "stop") {
  process.stderr.write(`${plan.message}\n`);
  process.exit(1);
}
if (plan.action === "install") {
  for (const [command, ...args] of plan.commands) {
    process.stderr.write(`test setup: ${command} ${args.join(" ")}\n`);
    const result = spawnSync(command as string, args, {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (result.status !== 0) {
      process.stderr.write(`test setup: \`${command} ${args.join(" ")}\` failed (exit ${result.status})\n`);
      process.exit(1);
    }
  }
}
